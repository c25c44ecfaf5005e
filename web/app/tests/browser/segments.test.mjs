// Segments: building a rule with an engagement condition and its live
// count, saving it, enrolling its members in a campaign; saving the
// contacts page's filter as a segment and filtering the table by it.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Segments', { concurrency: 1 }, () => {
    let env, owner, member, book, as, opener;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      member = await env.member(owner, 'member', 'Mia');
      ({ book, as } = await env.campaignBook(owner, 'Audiences'));
      const add = async (first, company) =>
        (await as('POST', '/api/contacts', { first_name: first, company, emails: [{ address: `${first.toLowerCase()}@example.com`, label: 'work' }] })).data.id;
      opener = await add('Ann', 'Acme Corp');
      await add('Ben', 'Acme Corp');
      await add('Cat', 'ACME Labs');
      await add('Dan', 'Globex');
      await as('POST', '/api/campaigns', { name: 'Welcome' });
      // Ann opened an email a week ago (the provider's feedback, as the intake stores it).
      env.db(`INSERT INTO delivery_events (book_id, sg_event_id, contact_id, campaign_id, step_id, participant_id, kind, occurred_at, received_at)
        VALUES ('${book}', 'seed-open', '${opener}', gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'opened', now() - interval '7 days', now())`);
    });

    test('a member builds a rule with an engagement condition, watches the count, saves it and enrolls its contacts', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/contacts`);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Segments' }).click();
      await page.getByRole('heading', { name: 'Segments of Audiences' }).waitFor();
      await page.getByRole('button', { name: 'New segment' }).click();
      await page.getByRole('heading', { name: 'New segment' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Engaged at Acme');
      await page.getByLabel('Field of condition 1').selectOption('company');
      await page.getByLabel('Test of condition 1').selectOption('contains');
      await page.getByLabel('Value of condition 1').fill('acme');
      const count = page.getByRole('status').filter({ hasText: /match/ });
      await count.getByText('3 contacts match').waitFor();

      await page.getByRole('button', { name: 'Add condition', exact: true }).click();
      await page.getByLabel('Field of condition 2').selectOption('email.opened');
      await page.getByLabel('Test of condition 2').selectOption('within_last_days');
      await page.getByLabel('Value of condition 2').fill('30');
      await count.getByText('1 contact matches').waitFor();
      await page.getByRole('link', { name: 'Ann' }).waitFor();
      // Fourteen days ago is before the open: nobody.
      await page.getByLabel('Value of condition 2').fill('3');
      await count.getByText('0 contacts match').waitFor();
      await page.getByLabel('Value of condition 2').fill('30');
      await count.getByText('1 contact matches').waitFor();
      await screen(page, 'segment-editor');

      await page.getByRole('button', { name: 'Save segment' }).click();
      await page.getByRole('heading', { name: 'Segment Engaged at Acme' }).waitFor();
      const rule = JSON.parse(env.db(`SELECT rule FROM segments WHERE book_id = '${book}' AND name = 'Engaged at Acme'`));
      assert.deepEqual(rule, {
        all: [
          { field: 'company', op: 'contains', value: 'acme' },
          { field: 'email.opened', op: 'within_last_days', value: 30 },
        ],
      });

      await page.getByRole('button', { name: 'Enroll in campaign' }).click();
      const d = page.getByRole('dialog', { name: 'Enroll the segment’s contacts' });
      await d.getByLabel('Campaign').selectOption({ label: 'Welcome' });
      await d.getByRole('button', { name: 'Enroll contacts' }).click();
      await page.getByText('1 contact enrolled in “Welcome”').waitFor();
      assert.equal(env.db(`SELECT string_agg(ct.first_name, ',') FROM campaign_participants p JOIN contacts ct ON ct.id = p.contact_id JOIN campaigns c ON c.id = p.campaign_id WHERE c.name = 'Welcome' AND c.book_id = '${book}'`), 'Ann');
      await page.done();
    });

    test('the contacts page saves its filter as a segment and filters by a segment', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/contacts`);
      await page.getByLabel('Search contacts').fill('acme');
      await page.getByText('3 matching contacts').waitFor();
      await page.getByRole('button', { name: 'Save as segment' }).click();
      await page.getByRole('heading', { name: 'New segment' }).waitFor();
      await page.getByRole('status').filter({ hasText: /match/ }).getByText('3 contacts match').waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Acme people');
      await page.getByRole('button', { name: 'Save segment' }).click();
      await page.getByRole('heading', { name: 'Segment Acme people' }).waitFor();

      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Contacts' }).click();
      await page.getByRole('heading', { name: 'Audiences' }).waitFor();
      await page.getByLabel('Segment', { exact: true }).selectOption({ label: 'Acme people' });
      await page.getByText('3 matching contacts').waitFor();
      assert.equal(await page.getByRole('table').getByRole('row').count(), 4); // the header and three contacts
      // The whole segment can be acted on at once.
      await page.getByRole('region', { name: 'Whole segment' }).getByText('All 3 contacts of “Acme people”').waitFor();
      await page.done();
    });
  });
