// A contact's timeline on its page, fed through the real paths: a campaign
// email sent to the fake SendGrid, then SendGrid's signed events about it
// (delivered, opened, clicked, unsubscribed) posted to the book's intake.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Contact timeline', { concurrency: 1 }, () => {
    let env, owner, viewer, book, ann, campaign;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      viewer = await env.member(owner, 'viewer');
      let as;
      ({ book, as } = await env.campaignBook(owner, 'Timeline', {
        addon: 'active',
        settings: {
          sender_name: 'Acme News', sender_email: 'news@acme.example', postal_code: '62701',
          event_webhook_public_key: env.eventKey.publicKey, track_opens: true, track_clicks: true,
        },
      }));
      ann = (await as('POST', '/api/contacts', { first_name: 'Ann', last_name: 'Lee', emails: [{ address: 'ann.timeline@example.com', label: 'work', primary: true }] })).data.id;
      const tpl = (await as('POST', '/api/campaign-templates', { name: 'Welcome', subject: 'Welcome, {{first_name}}', body_html: '<p>Hello {{first_name}}</p>' })).data.id;
      campaign = (await as('POST', '/api/campaigns', { name: 'Onboarding' })).data.id;
      await as('POST', `/api/campaigns/${campaign}/steps`, { step_type: 'email', name: 'Welcome', schedule_type: 'immediate', email_template_id: tpl });
      await as('PATCH', `/api/campaigns/${campaign}`, { status: 'active' });
      await as('POST', `/api/campaigns/${campaign}/participants`, { contact_ids: [ann] });
      await as('POST', `/api/campaigns/${campaign}/run`);
      const mail = await env.mailTo('ann.timeline@example.com');
      assert.equal(mail.subject, 'Welcome, Ann');
      const r = await env.providerEvents(book, [
        [mail, 'delivered'],
        [mail, 'open'],
        [mail, 'click', { url: 'https://acme.example/start' }],
        [mail, 'unsubscribe'],
      ]);
      assert.equal(r.data.applied, 4, JSON.stringify(r));
    });

    test('the contact page shows the enrollment, the email and what became of it', async (t) => {
      const page = await env.page(t);
      await login(page, viewer, `/app/contacts/${ann}`);
      const timeline = page.getByRole('region', { name: 'Timeline' });
      await timeline.getByRole('listitem').filter({ hasText: 'Unsubscribed from Onboarding' }).waitFor();
      const kinds = await timeline.getByRole('listitem').evaluateAll((lis) => lis.map((li) => li.dataset.type));
      assert.deepEqual([...kinds].sort(), ['clicked', 'delivered', 'enrolled', 'opened', 'sent', 'unsubscribed']);
      assert.equal(kinds[kinds.length - 1], 'enrolled', 'newest first: the enrollment comes last');
      await timeline.getByText(': https://acme.example/start').waitFor();
      assert.equal(await timeline.getByRole('link', { name: 'Onboarding' }).first().getAttribute('href'), `/app/books/${book}/campaigns/${campaign}`);
      // The unsubscribe also suppressed the address.
      assert.equal(env.db(`SELECT reason FROM suppressions WHERE book_id = '${book}' AND email = 'ann.timeline@example.com' AND lifted_at IS NULL`), 'unsubscribe');
      await screen(page, 'contact-timeline');
      await page.done();
    });
  });
