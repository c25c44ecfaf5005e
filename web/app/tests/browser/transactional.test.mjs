// Transactional email and product events in the dashboard: the book's
// Transactional screen (the list, its status filter, a message's detail
// with what the provider reported), the events on a contact's page, the
// campaign editor's "start when this event arrives" field (and the email
// an event then sends at once), and the segment builder's event condition.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Transactional email and events', { concurrency: 1 }, () => {
    let env, owner, viewer, book, as, ann, tpl;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      viewer = await env.member(owner, 'viewer');
      ({ book, as } = await env.campaignBook(owner, 'Receipts', { addon: 'active', settings: { event_webhook_public_key: env.eventKey.publicKey } }));
      ann = (await as('POST', '/api/contacts', { first_name: 'Ann', last_name: 'Lee', emails: [{ address: 'ann.tx@example.com', label: 'work', primary: true }] })).data.id;
      tpl = (await as('POST', '/api/campaign-templates', { name: 'Receipt', subject: 'Receipt {{data.order}}', body_html: '<p>Thanks {{first_name}}, order {{data.order}}</p>' })).data.id;
    });

    test('the Transactional screen lists the messages, filters them by status and shows one with its provider events', async (t) => {
      const sent = (await as('POST', '/api/transactional', { template_id: tpl, to: { contact_id: ann }, data: { order: 'A-1' } })).data;
      await as('POST', '/api/suppressions', { email: 'gone.tx@example.com', reason: 'bounce' });
      const suppressed = (await as('POST', '/api/transactional', { template_id: tpl, to: { email: 'gone.tx@example.com' } })).data;
      assert.equal(suppressed.status, 'suppressed');
      const mail = await env.mailTo('ann.tx@example.com');
      assert.equal(mail.subject, 'Receipt A-1');
      assert.equal(mail.customArgs.transactional_id, sent.id);
      const r = await env.providerEvents(book, [[mail, 'delivered'], [mail, 'open']]);
      assert.equal(r.data.applied, 2, JSON.stringify(r));

      const page = await env.page(t);
      await login(page, viewer, `/app/books/${book}/contacts`);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Transactional' }).click();
      await page.getByRole('heading', { name: 'Transactional email of Receipts' }).waitFor();
      const table = page.getByRole('table', { name: 'Transactional emails' });
      await table.getByRole('row').filter({ hasText: 'Receipt A-1' }).filter({ hasText: 'Sent' }).waitFor();
      await table.getByRole('row').filter({ hasText: 'gone.tx@example.com' }).filter({ hasText: 'Suppressed' }).waitFor();
      await page.getByLabel('Status').selectOption('suppressed');
      await table.getByRole('row').filter({ hasText: 'gone.tx@example.com' }).waitFor();
      await table.getByRole('row').filter({ hasText: 'Receipt A-1' }).waitFor({ state: 'detached' });
      await page.getByLabel('Status').selectOption('sent');
      await table.getByRole('button', { name: /Ann Lee/ }).click();
      const d = page.getByRole('dialog', { name: 'Transactional email' });
      await d.getByText('Receipt A-1').waitFor();
      const kinds = await d.getByRole('list', { name: 'Provider events' }).getByRole('listitem').evaluateAll((lis) => lis.map((li) => li.dataset.kind));
      assert.deepEqual(kinds, ['delivered', 'opened']);
      await screen(page, 'transactional-detail');
      await d.getByRole('button', { name: 'Close' }).click();
      await page.done();
    });

    test('the contact page shows its events and its transactional emails', async (t) => {
      await as('POST', '/api/events', { name: 'order.paid', contact: { id: ann }, properties: { total: 49 } });
      await as('POST', '/api/events', { name: 'trial.started', contact: { email: 'ann.tx@example.com' } });
      const page = await env.page(t);
      await login(page, viewer, `/app/contacts/${ann}`);
      const events = page.getByRole('region', { name: 'Events' });
      await events.getByRole('listitem').filter({ hasText: 'trial.started' }).waitFor();
      const names = await events.getByRole('listitem').evaluateAll((lis) => lis.map((li) => li.dataset.event));
      assert.deepEqual(names, ['trial.started', 'order.paid'], 'newest first');
      await events.getByText(': {"total":49}').waitFor();
      const timeline = page.getByRole('region', { name: 'Timeline' });
      await timeline.getByRole('link', { name: 'Transactional email sent' }).waitFor();
      await screen(page, 'contact-events');
      await page.done();
    });

    test('a campaign started by an event sends its first email when the event arrives', async (t) => {
      const welcome = (await as('POST', '/api/campaign-templates', { name: 'Welcome', subject: 'Welcome to {{event.plan}}', body_html: '<p>Hi {{first_name}}</p>' })).data.id;
      const campaign = (await as('POST', '/api/campaigns', { name: 'On signup' })).data.id;
      await as('POST', `/api/campaigns/${campaign}/steps`, { step_type: 'email', name: 'Welcome', schedule_type: 'immediate', email_template_id: welcome });
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/campaigns/${campaign}`);
      await page.getByRole('heading', { name: 'Campaign On signup' }).waitFor();
      await page.getByRole('button', { name: 'Edit details' }).click();
      const d = page.getByRole('dialog', { name: 'Edit the campaign' });
      await d.getByLabel('Start when this event arrives').fill('signup.completed');
      await d.getByRole('button', { name: 'Save campaign' }).click();
      await page.getByText('signup.completed').waitFor();
      assert.equal(env.db(`SELECT entry_event FROM campaigns WHERE id = '${campaign}'`), 'signup.completed');
      await as('PATCH', `/api/campaigns/${campaign}`, { status: 'active' });
      const bob = (await as('POST', '/api/contacts', { first_name: 'Bob', emails: [{ address: 'bob.tx@example.com', label: 'work', primary: true }] })).data.id;
      await as('POST', '/api/events', { name: 'signup.completed', contact: { id: bob }, properties: { plan: 'Pro' } });
      const mail = await env.mailTo('bob.tx@example.com');
      assert.equal(mail.subject, 'Welcome to Pro');
      await screen(page, 'campaign-entry-event');
      await page.done();
    });

    test('the segment builder tests a contact’s events by name', async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/segments/new`);
      await page.getByRole('heading', { name: 'New segment' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Paid lately');
      await page.getByLabel('Field of condition 1').selectOption('event');
      await page.getByLabel('Event name of condition 1').fill('order.paid');
      await page.getByLabel('Test of condition 1').selectOption('within_last_days');
      await page.getByLabel('Value of condition 1').fill('30');
      const count = page.getByRole('status').filter({ hasText: /match/ });
      await count.getByText('1 contact matches').waitFor();
      await page.getByRole('link', { name: 'Ann' }).waitFor();
      await page.getByLabel('Test of condition 1').selectOption('never');
      await count.getByText('1 contact matches').waitFor();
      await page.getByRole('link', { name: 'Bob' }).waitFor();
      await page.getByLabel('Test of condition 1').selectOption('within_last_days');
      await page.getByLabel('Value of condition 1').fill('30');
      await count.getByText('1 contact matches').waitFor();
      await screen(page, 'segment-event-condition');
      await page.getByRole('button', { name: 'Save segment' }).click();
      await page.getByRole('heading', { name: 'Segment Paid lately' }).waitFor();
      assert.deepEqual(JSON.parse(env.db(`SELECT rule FROM segments WHERE book_id = '${book}' AND name = 'Paid lately'`)), {
        all: [{ field: 'event', name: 'order.paid', op: 'within_last_days', value: 30 }],
      });
      await page.done();
    });
  });
