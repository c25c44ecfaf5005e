// When and what a campaign sends, through the app: a contact's time zone
// picked in the contact editor, a step held by its send window for the
// contact whose zone is outside it (waiting in the report), a follow-up
// only to those who did not open the first email (skipped in the report
// and the history), two A/B subjects decided by the signed opens of the
// fake SendGrid, the winner in the report, and a subject's own template
// kept and changed in the step editor.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Campaign windows, conditions and A/B subjects', { concurrency: 1 }, () => {
    let env, owner, book, as;
    const contact = async (first, zone) =>
      (await as('POST', '/api/contacts', { first_name: first, last_name: 'Timing', time_zone: zone, emails: [{ address: `${first.toLowerCase()}.timing@example.com`, label: 'work', primary: true }] })).data.id;
    const template = async (name, subject) => (await as('POST', '/api/campaign-templates', { name, subject, body_html: '<p>Hello {{first_name}}</p>' })).data.id;
    before(async () => {
      env = await start();
      owner = await env.signup('Timer');
      ({ book, as } = await env.campaignBook(owner, 'Timing list', {
        addon: 'active',
        settings: { event_webhook_public_key: env.eventKey.publicKey, track_opens: true },
      }));
    });

    // Runs the campaign from its page and waits for the run to settle.
    async function runNow(page) {
      await page.getByRole('button', { name: 'Run now' }).click();
      await page.getByRole('status').filter({ hasText: /^Done:/ }).waitFor({ state: 'detached' });
      await page.getByRole('status').filter({ hasText: /^Done:/ }).waitFor({ timeout: 30000 });
    }

    // A campaign made and activated through the API, its page opened.
    async function openCampaign(page, name) {
      const id = (await as('POST', '/api/campaigns', { name })).data.id;
      await page.goto(`/app/books/${book}/campaigns/${id}`);
      await page.getByRole('heading', { name: `Campaign ${name}` }).waitFor();
      return id;
    }

    test("a contact's time zone, and a step held by its window", async (t) => {
      const page = await env.page(t);
      const utc = await contact('Una', 'UTC');
      const far = await contact('Kiran', null);
      await template('Window mail', 'Inside the window');
      await login(page, owner, `/app/contacts/${far}/edit`);
      // The searchable zone field.
      await page.getByLabel('Time zone').fill('Asia/Kolk');
      await page.getByLabel('Time zone').fill('Asia/Kolkata');
      await page.getByRole('button', { name: 'Save contact' }).click();
      await page.getByText('Asia/Kolkata', { exact: true }).waitFor();
      assert.equal(env.db(`SELECT time_zone FROM contacts WHERE id = '${far}'`), 'Asia/Kolkata');

      // A window of three hours around the hour now in UTC: open for Una,
      // shut for Kiran (5 h 30 ahead) whatever the hour.
      const h = new Date().getUTCHours();
      const from = `${String(Math.max(0, h - 1)).padStart(2, '0')}:00`;
      const until = `${String(Math.min(24, h + 2)).padStart(2, '0')}:00`;
      const id = await openCampaign(page, 'Window');
      await page.getByRole('button', { name: 'Add step' }).click();
      const step = page.getByRole('dialog', { name: 'Add a step' });
      await step.getByLabel('Step name').fill('Windowed');
      await step.getByLabel('Template').selectOption({ label: 'Window mail' });
      await step.getByLabel('Only send inside a window').check();
      await step.getByText("each contact's own time zone").waitFor();
      for (const d of ['Saturday', 'Sunday']) await step.getByLabel(d).check();
      await step.getByLabel('From').fill(from);
      await step.getByLabel('Until').fill(until);
      await screen(page, 'step-window');
      await step.getByRole('button', { name: 'Add step' }).click();
      await page.getByRole('cell', { name: new RegExp(`Mon, Tue, Wed, Thu, Fri, Sat, Sun ${from}–${until} in each contact's time zone`) }).waitFor();
      await as('PATCH', `/api/campaigns/${id}`, { status: 'active' });
      await as('POST', `/api/campaigns/${id}/participants`, { contact_ids: [utc, far] });
      await page.reload();
      await runNow(page);
      const una = await env.mailTo('una.timing@example.com');
      assert.equal(una.subject, 'Inside the window');
      assert.equal(env.mails.filter((m) => m.to === 'kiran.timing@example.com').length, 0, 'Kiran is outside the window');

      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Report' }).click();
      const row = page.getByRole('table', { name: "Each step's emails and what became of them" }).getByRole('row', { name: /Windowed/ });
      await row.waitFor();
      const cells = await row.getByRole('cell').allTextContents();
      assert.equal(cells[1], '1', 'sent');
      assert.equal(cells.at(-1), '1', 'waiting');
      await page.done();
    });

    test('a follow-up only to those who did not open', async (t) => {
      const page = await env.page(t);
      const [ann, bob] = [await contact('Ann', null), await contact('Bob', null)];
      await template('First mail', 'First');
      await template('Nudge mail', 'Did you see it?');
      await login(page, owner, `/app/books/${book}/campaigns`);
      const id = await openCampaign(page, 'Nudge');
      await page.getByRole('button', { name: 'Add step' }).click();
      let step = page.getByRole('dialog', { name: 'Add a step' });
      await step.getByLabel('Step name').fill('First');
      await step.getByLabel('Template').selectOption({ label: 'First mail' });
      await step.getByRole('button', { name: 'Add step' }).click();
      await page.getByText('Step “First” saved.').waitFor();
      // The nudge waits for a date far ahead until the first email has
      // been opened (or not).
      await page.getByRole('button', { name: 'Add step' }).click();
      step = page.getByRole('dialog', { name: 'Add a step' });
      await step.getByLabel('Step name').fill('Nudge');
      await step.getByLabel('Template').selectOption({ label: 'Nudge mail' });
      await step.getByLabel('When').selectOption({ label: 'On a date' });
      await step.getByLabel('Date').fill('2099-01-01');
      await step.getByLabel('Only for contacts who').selectOption({ label: 'did not open it' });
      await step.getByLabel('Earlier email step').selectOption({ label: '1. First' });
      await screen(page, 'step-condition');
      await step.getByRole('button', { name: 'Add step' }).click();
      await page.getByRole('cell', { name: /only if they did not open it \(First\)/ }).waitFor();
      await as('PATCH', `/api/campaigns/${id}`, { status: 'active' });
      await as('POST', `/api/campaigns/${id}/participants`, { contact_ids: [ann, bob] });
      await page.reload();
      await runNow(page);
      const first = await env.mailTo('ann.timing@example.com');
      await env.mailTo('bob.timing@example.com');
      // Ann opens hers (a signed event of the fake SendGrid).
      assert.equal((await env.providerEvents(book, [[first, 'open']])).data.applied, 1);

      await page.getByRole('button', { name: 'Edit Nudge' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit the step “Nudge”' });
      await edit.getByLabel('When').selectOption({ label: 'Right after the previous step' });
      await edit.getByRole('button', { name: 'Save step' }).click();
      await page.getByText('Step “Nudge” saved.').waitFor();
      await runNow(page);
      const nudges = env.mails.filter((m) => m.subject === 'Did you see it?').map((m) => m.to);
      assert.deepEqual(nudges, ['bob.timing@example.com']);

      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Report' }).click();
      const row = page.getByRole('table', { name: "Each step's emails and what became of them" }).getByRole('row', { name: /Nudge/ });
      await row.getByRole('button', { name: '1: the contacts of Nudge, skipped' }).click();
      const skipped = page.getByRole('dialog', { name: 'Skipped: Nudge' });
      await skipped.getByRole('link', { name: 'Ann Timing' }).waitFor();
      await skipped.getByRole('cell', { name: 'condition not met: not_opened First' }).waitFor();
      await screen(page, 'report-skipped');
      await skipped.getByRole('button', { name: 'Close' }).click();
      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Participants' }).click();
      await page.getByRole('button', { name: 'History of Ann Timing' }).click();
      await page.getByRole('dialog', { name: 'History of Ann Timing' }).getByRole('cell', { name: /^Skipped: condition not met/ }).waitFor();
      await page.done();
    });

    test('two subjects tried, the winner sent to the rest', async (t) => {
      const page = await env.page(t);
      const ids = [];
      for (const n of ['Ava', 'Ben', 'Cy', 'Dee', 'Eli', 'Fay']) ids.push(await contact(n, null));
      await template('Launch mail', 'Template subject');
      await login(page, owner, `/app/books/${book}/campaigns`);
      const id = await openCampaign(page, 'Launch');
      await page.getByRole('button', { name: 'Add step' }).click();
      const step = page.getByRole('dialog', { name: 'Add a step' });
      await step.getByLabel('Step name').fill('Launch');
      await step.getByLabel('Template').selectOption({ label: 'Launch mail' });
      await step.getByRole('button', { name: 'Add subject' }).click();
      await step.getByLabel('Subject A').fill('Big news');
      await step.getByRole('button', { name: 'Add subject' }).click();
      await step.getByLabel('Subject B').fill('You will like this');
      await step.getByLabel('Test on percent of the participants').fill('30');
      await step.getByLabel('Decide after minutes').fill('0');
      await screen(page, 'step-ab');
      await step.getByRole('button', { name: 'Add step' }).click();
      await page.getByRole('cell', { name: /A\/B: 2 subjects/ }).waitFor();
      await as('PATCH', `/api/campaigns/${id}`, { status: 'active' });
      await as('POST', `/api/campaigns/${id}/participants`, { contact_ids: ids });
      await page.reload();
      await runNow(page);
      // 30 % of 6 is 2: one email of each subject; the other four wait.
      const tested = env.mails.filter((m) => m.customArgs?.campaign_id === id);
      assert.deepEqual(tested.map((m) => m.subject).sort(), ['Big news', 'You will like this']);
      const b = tested.find((m) => m.subject === 'You will like this');
      assert.equal((await env.providerEvents(book, [[b, 'open']])).data.applied, 1);

      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Report' }).click();
      await page.getByRole('table', { name: 'A/B subjects of Launch: the test is not decided yet' }).waitFor();
      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Sequence' }).click();
      // The next run decides (B was opened) and sends B to the other four.
      await runNow(page);
      const all = env.mails.filter((m) => m.customArgs?.campaign_id === id);
      assert.equal(all.length, 6);
      assert.equal(all.filter((m) => m.subject === 'You will like this').length, 5);

      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Report' }).click();
      const ab = page.getByRole('table', { name: 'A/B subjects of Launch' });
      const winner = ab.getByRole('row', { name: /You will like this/ });
      await winner.getByRole('cell', { name: 'Winner', exact: true }).waitFor();
      assert.deepEqual((await winner.getByRole('cell').allTextContents()).slice(0, 3), ['You will like this', '5', '1 (20.0 %)']);
      await screen(page, 'report-ab');
      await page.done();
    });
    test("a subject's own template is kept across an edit, and changed in the editor", async (t) => {
      const page = await env.page(t);
      const plain = await template('Plain mail', 'Plain');
      const fancy = await template('Fancy mail', 'Fancy');
      await login(page, owner, `/app/books/${book}/campaigns`);
      const id = await openCampaign(page, 'Variants');
      // A step made through the API: subject A with the step's template, B with its own.
      await as('POST', `/api/campaigns/${id}/steps`, {
        step_type: 'email', name: 'Pick', schedule_type: 'immediate', email_template_id: plain,
        variants: [{ subject: 'Plain subject' }, { subject: 'Fancy subject', email_template_id: fancy }],
      });
      const variants = async () => (await as('GET', `/api/campaigns/${id}`)).data.steps[0].variants;
      const before = await variants();
      await page.reload();

      await page.getByRole('button', { name: 'Edit Pick' }).click();
      let edit = page.getByRole('dialog', { name: 'Edit the step “Pick”' });
      const templateOf = (letter) => edit.getByRole('combobox', { name: `Template for ${letter}`, exact: true });
      // The editor shows each subject's template.
      assert.equal(await templateOf('A').locator('option:checked').textContent(), "The step's template");
      assert.equal(await templateOf('B').locator('option:checked').textContent(), 'Fancy mail');
      await screen(page, 'step-variant-templates');
      await edit.getByLabel('Subject A', { exact: true }).fill('Plain subject, edited');
      await edit.getByRole('button', { name: 'Save step' }).click();
      await page.getByText('Step “Pick” saved.').waitFor();
      assert.deepEqual(
        (await variants()).map((v) => [v.id, v.subject, v.email_template_id]),
        [
          [before[0].id, 'Plain subject, edited', null],
          [before[1].id, 'Fancy subject', fancy],
        ],
      );

      // A gets the fancy template, B goes back to the step's.
      await page.getByRole('button', { name: 'Edit Pick' }).click();
      edit = page.getByRole('dialog', { name: 'Edit the step “Pick”' });
      await templateOf('A').selectOption({ label: 'Fancy mail' });
      await templateOf('B').selectOption({ label: "The step's template" });
      await edit.getByRole('button', { name: 'Save step' }).click();
      // Saved once the dialog has gone (the notice is the first save's).
      await edit.waitFor({ state: 'detached' });
      assert.deepEqual(
        (await variants()).map((v) => [v.subject, v.email_template_id]),
        [
          ['Plain subject, edited', fancy],
          ['Fancy subject', null],
        ],
      );
      await page.done();
    });
  });
