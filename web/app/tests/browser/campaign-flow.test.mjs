// A campaign end to end through the app: a template written in the editor,
// a campaign and its step, participants enrolled by label and from the
// contacts table, Run now, the emails at the fake SendGrid, SendGrid's
// signed events about them, the report's numbers and the contacts behind
// them, the bounced address among the suppressions; then a participant's
// history and removal.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('A campaign end to end', { concurrency: 1 }, () => {
    let env, owner, book, as, campaign;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      ({ book, as } = await env.campaignBook(owner, 'Spring list', {
        addon: 'active',
        settings: { sender_name: 'Acme', sender_email: 'hello@acme.example', event_webhook_public_key: env.eventKey.publicKey, track_opens: true },
      }));
      const vip = (await as('POST', `/api/books/${book}/labels`, { name: 'VIP' })).data.id;
      for (const [first, tagged] of [['Ann', true], ['Bob', true], ['Cat', false]]) {
        const c = (await as('POST', '/api/contacts', { first_name: first, last_name: 'Flow', emails: [{ address: `${first.toLowerCase()}.flow@example.com`, label: 'work', primary: true }] })).data.id;
        if (tagged) await as('POST', `/api/contacts/${c}/labels`, { label_id: vip });
      }
    });

    test('template, campaign, enrollment, run, provider events, report, suppressions', async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/templates/new`);
      await page.getByLabel('Name', { exact: true }).fill('Spring sale');
      await page.getByLabel('Subject', { exact: true }).fill('Spring sale for {{first_name}}');
      await page.getByLabel('Body (HTML)').fill('<p>Hi {{first_name}}, 20 % off this week.</p>');
      await page.getByRole('button', { name: 'Create template' }).click();
      await page.getByText('Template saved.').waitFor();

      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
      await page.getByRole('button', { name: 'New campaign' }).click();
      await page.getByRole('dialog', { name: 'New campaign' }).getByLabel('Name').fill('Spring');
      await page.getByRole('dialog', { name: 'New campaign' }).getByRole('button', { name: 'Create campaign' }).click();
      await page.getByRole('heading', { name: 'Campaign Spring' }).waitFor();
      campaign = /campaigns\/([0-9a-f-]{36})/.exec(page.url())[1];
      await page.getByRole('button', { name: 'Add step' }).click();
      const step = page.getByRole('dialog', { name: 'Add a step' });
      await step.getByLabel('Step name').fill('Sale email');
      await step.getByLabel('Template').selectOption({ label: 'Spring sale' });
      await step.getByRole('button', { name: 'Add step' }).click();
      await page.getByRole('cell', { name: 'Email: Spring sale' }).waitFor();
      await page.getByRole('button', { name: 'Activate' }).click();
      await page.getByText('Activated: the campaign is running.').waitFor();

      // Enroll the label on the Participants tab, Cat from the contacts table.
      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Participants' }).click();
      await page.getByLabel('Label to enroll').selectOption({ label: 'VIP' });
      await page.getByRole('button', { name: 'Enroll label' }).click();
      await page.getByText('2 contacts labelled “VIP” enrolled').waitFor();
      await page.goto(`/app/books/${book}/contacts?q=cat`);
      await page.getByRole('checkbox', { name: /Cat Flow/ }).check();
      await page.getByRole('button', { name: 'Enroll in campaign' }).click();
      const enroll = page.getByRole('dialog', { name: 'Enroll in a campaign' });
      await enroll.getByLabel('Campaign').selectOption({ label: 'Spring' });
      await enroll.getByRole('button', { name: 'Enroll 1 contact' }).click();
      await page.getByText('1 contact enrolled in “Spring”').waitFor();
      await page.goto(`/app/books/${book}/campaigns/${campaign}/participants`);
      const people = page.getByRole('table', { name: 'Participants' });
      await people.getByRole('link', { name: 'Cat Flow' }).waitFor();
      assert.equal(await people.locator('tbody tr').count(), 3);
      await screen(page, 'campaign-participants');

      // Run now: the fake provider receives the three emails.
      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Sequence' }).click();
      await page.getByRole('button', { name: 'Run now' }).click();
      await page.getByRole('status').filter({ hasText: /^Done: 3 steps done for 3 participants; 0 failed\.$/ }).waitFor({ timeout: 20000 });
      const [ann, bob, cat] = await Promise.all(['ann', 'bob', 'cat'].map((n) => env.mailTo(`${n}.flow@example.com`)));
      assert.equal(ann.subject, 'Spring sale for Ann');
      assert.match(bob.html, /Hi Bob, 20 % off this week\./);

      // SendGrid's signed events about them.
      const r = await env.providerEvents(book, [
        [ann, 'delivered'],
        [ann, 'open'],
        [cat, 'delivered'],
        [bob, 'bounce', { type: 'bounce', reason: '550 5.1.1 The email account does not exist' }],
      ]);
      assert.equal(r.data.applied, 4);

      // The report: delivered 2, opened 1, bounced 1; the contacts behind a number.
      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Report' }).click();
      const report = page.getByRole('table', { name: "Each step's emails and what became of them" });
      const row = report.getByRole('row', { name: /Sale email/ });
      await row.waitFor();
      const cells = await row.getByRole('cell').allTextContents();
      assert.deepEqual(cells, ['1. Sale email', '3', '2', '1', '0', '1', '0', '0', '0', '0'], 'step, sent, delivered, opened, clicked, bounced, spam reports, failed, skipped, waiting');
      await page.getByRole('img', { name: /^Bars of each step's/ }).waitFor();
      await screen(page, 'campaign-report');
      await row.getByRole('button', { name: '1: the contacts of Sale email, bounced' }).click();
      const bounced = page.getByRole('dialog', { name: 'Bounced: Sale email' });
      await bounced.getByRole('link', { name: 'Bob Flow' }).waitFor();
      assert.equal(await bounced.locator('tbody tr').count(), 1);
      await bounced.getByRole('button', { name: 'Close' }).click();

      // The bounced address is suppressed.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Suppressions' }).click();
      const sup = page.getByRole('table', { name: 'Suppressed addresses' });
      const bobRow = sup.getByRole('row', { name: /bob\.flow@example\.com/ });
      await bobRow.getByRole('cell', { name: 'Bounced', exact: true }).waitFor();
      await page.getByText('Sent').first().waitFor();
      await page.done();
    });

    test("a participant's history, and removing one", async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/campaigns/${campaign}/participants`);
      await page.getByRole('button', { name: 'History of Ann Flow' }).click();
      const h = page.getByRole('dialog', { name: 'History of Ann Flow' });
      await h.getByRole('cell', { name: '1. Sale email' }).waitFor();
      await h.getByRole('cell', { name: 'Done', exact: true }).waitFor();
      await screen(page, 'participant-history');
      await h.getByRole('button', { name: 'Close' }).click();
      await page.getByRole('button', { name: 'Remove Cat Flow' }).click();
      await page.getByRole('dialog', { name: 'Remove Cat Flow from the campaign?' }).getByRole('button', { name: 'Remove participant' }).click();
      await page.getByText('Cat Flow was removed from the campaign.').waitFor();
      assert.equal(env.db(`SELECT p.status FROM campaign_participants p JOIN contacts c ON c.id = p.contact_id WHERE p.campaign_id = '${campaign}' AND c.first_name = 'Cat'`), 'removed');
      await page.done();
    });
  });
