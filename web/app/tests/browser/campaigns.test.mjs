// Campaigns: the list, a new campaign, the sequence editor (email, delay
// and trigger steps, edit, reorder by keyboard and by drag, delete), the
// status actions with the add-on's rules, and Run now with its progress
// through the fake provider; what a viewer sees.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Campaigns', { concurrency: 1 }, () => {
    let env, owner, member, viewer, book, as, campaign;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      member = await env.member(owner, 'member', 'Mick');
      viewer = await env.member(owner, 'viewer', 'Vera');
      ({ book, as } = await env.campaignBook(owner, 'Drip'));
      await as('POST', '/api/campaign-templates', { name: 'Welcome', subject: 'Welcome {{first_name}}', body_html: '<p>Hi {{first_name}}</p>' });
      await as('POST', '/api/campaign-templates', { name: 'Reminder', subject: 'Still there?', body_html: '<p>Hello again</p>' });
      await as('POST', '/api/campaigns', { name: 'Follow-up' });
    });
    const order = () => env.db(`SELECT string_agg(name, ',' ORDER BY sort_order) FROM campaign_steps WHERE campaign_id = '${campaign}'`);

    test('a member builds a sequence and reorders it by keyboard and by drag', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/contacts`);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
      await page.getByRole('heading', { name: 'Campaigns of Drip' }).waitFor();
      await page.getByRole('button', { name: 'New campaign' }).click();
      const d = page.getByRole('dialog', { name: 'New campaign' });
      await d.getByLabel('Name').fill('Onboarding');
      await d.getByLabel('Description').fill('Two emails and a hand-over.');
      await d.getByRole('button', { name: 'Create campaign' }).click();
      await page.getByRole('heading', { name: 'Campaign Onboarding' }).waitFor();
      campaign = /campaigns\/([0-9a-f-]{36})/.exec(page.url())[1];

      const add = async (fill) => {
        await page.getByRole('button', { name: 'Add step' }).click();
        const s = page.getByRole('dialog', { name: 'Add a step' });
        await fill(s);
        await s.getByRole('button', { name: 'Add step' }).click();
        await s.waitFor({ state: 'detached' });
      };
      await add(async (s) => {
        await s.getByLabel('Step name').fill('Hello');
        await s.getByLabel('Template').selectOption({ label: 'Welcome' });
      });
      await add(async (s) => {
        await s.getByLabel('Step name').fill('Nudge');
        await s.getByLabel('When').selectOption('delay');
        await s.getByLabel('Days after the previous step').fill('3');
        await s.getByLabel('Template').selectOption({ label: 'Reminder' });
        await s.getByLabel('Sender email').fill('nudge@acme.example');
      });
      await add(async (s) => {
        await s.getByLabel('Kind').selectOption('trigger');
        await s.getByLabel('Step name').fill('Hand over');
        await s.getByLabel('Campaign to enroll in').selectOption({ label: 'Follow-up' });
      });
      await page.getByRole('cell', { name: 'Enroll in: Follow-up' }).waitFor();
      await page.getByRole('cell', { name: '3 days after the previous step' }).waitFor();
      assert.equal(order(), 'Hello,Nudge,Hand over');
      assert.equal(env.db(`SELECT sender_email || '/' || delay_days FROM campaign_steps WHERE campaign_id = '${campaign}' AND name = 'Nudge'`), 'nudge@acme.example/3');
      await screen(page, 'campaign-sequence');

      // Keyboard: the Move buttons.
      await page.getByRole('button', { name: 'Move up Hand over' }).focus();
      await page.keyboard.press('Enter');
      await page.getByText('“Hand over” moved to position 2 of 3.').waitFor();
      assert.equal(order(), 'Hello,Hand over,Nudge');
      // Drag Nudge onto Hello.
      await page.locator('.draggable', { hasText: 'Nudge' }).dragTo(page.locator('.draggable', { hasText: 'Hello' }));
      await page.getByText('“Nudge” moved to position 1 of 3.').waitFor();
      assert.equal(order(), 'Nudge,Hello,Hand over');

      // Edit: inactive; delete the hand-over.
      await page.getByRole('button', { name: 'Edit Hello' }).click();
      const e = page.getByRole('dialog', { name: 'Edit the step “Hello”' });
      await e.getByLabel('Active').uncheck();
      await e.getByRole('button', { name: 'Save step' }).click();
      await page.getByText('Step “Hello” saved.').waitFor();
      assert.equal(env.db(`SELECT active FROM campaign_steps WHERE campaign_id = '${campaign}' AND name = 'Hello'`), 'f');
      await page.getByRole('button', { name: 'Delete Hand over' }).click();
      await page.getByRole('dialog', { name: 'Delete the step “Hand over”?' }).getByRole('button', { name: 'Delete step' }).click();
      await page.getByText('The step “Hand over” was deleted.').waitFor();
      assert.equal(order(), 'Nudge,Hello');
      await page.done();
    });

    test('status changes follow the add-on; Run now sends through the provider and shows its progress', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/campaigns/${campaign}`);
      await page.getByRole('button', { name: 'Edit Hello' }).click();
      const e = page.getByRole('dialog', { name: 'Edit the step “Hello”' });
      await e.getByLabel('Active').check();
      await e.getByRole('button', { name: 'Save step' }).click();
      await page.getByText('Step “Hello” saved.').waitFor();
      await page.getByRole('button', { name: 'Move down Nudge' }).click();
      await page.getByText('“Nudge” moved to position 2 of 2.').waitFor();

      // The trial: activate works, Run now needs the paid add-on.
      await page.getByRole('button', { name: 'Activate' }).click();
      await page.getByText('Activated: the campaign is running.').waitFor();
      await page.getByRole('button', { name: 'Run now' }).click();
      const blocked = page.getByRole('alert').filter({ hasText: 'Run now need the paid add-on' });
      await blocked.waitFor();
      await blocked.getByRole('link', { name: 'Billing' }).waitFor();
      await screen(page, 'campaign-blocked');

      env.db(`UPDATE teams SET campaign_addon = 'active' WHERE id = '${owner.teamId}'`);
      const ann = (await as('POST', '/api/contacts', { first_name: 'Ann', last_name: 'Drip', emails: [{ address: 'ann.drip@example.com', label: 'work', primary: true }] })).data.id;
      await as('POST', `/api/campaigns/${campaign}/participants`, { contact_ids: [ann] });
      await page.getByRole('button', { name: 'Run now' }).click();
      await page.getByRole('status').filter({ hasText: /^Done: 1 step done for 1 participants; 0 failed\.$/ }).waitFor({ timeout: 20000 });
      const mail = await env.mailTo('ann.drip@example.com');
      assert.equal(mail.subject, 'Welcome Ann');

      await page.getByRole('button', { name: 'Pause' }).click();
      await page.getByText('Paused: the campaign is paused.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Run now' }).isDisabled(), true);
      await page.getByRole('button', { name: 'Archive' }).click();
      await page.getByText('Archived: the campaign is archived.').waitFor();
      assert.equal(env.db(`SELECT status FROM campaigns WHERE id = '${campaign}'`), 'archived');
      await page.goto(`/app/books/${book}/campaigns`);
      const row = page.getByRole('row', { name: /Onboarding/ });
      await row.getByRole('cell', { name: 'Archived' }).waitFor();
      await screen(page, 'campaigns');
      await page.done();
    });

    test('a viewer reads the sequence without controls', async (t) => {
      const page = await env.page(t);
      await login(page, viewer, `/app/books/${book}/campaigns`);
      assert.equal(await page.getByRole('button', { name: 'New campaign' }).count(), 0);
      await page.getByRole('link', { name: 'Onboarding' }).click();
      await page.getByRole('heading', { name: 'Campaign Onboarding' }).waitFor();
      await page.getByText('Changing the campaign: Needs the member role or higher.').waitFor();
      assert.equal(await page.getByRole('button', { name: /^(Add step|Activate|Run now|Edit|Delete|Move)/ }).count(), 0);
      await screen(page, 'campaign-viewer');
      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Participants' }).click();
      await page.getByText('Enrolling and removing participants: Needs the member role or higher.').waitFor();
      await page.getByRole('link', { name: 'Ann Drip' }).waitFor();
      assert.equal(await page.getByRole('button', { name: /^(Enroll|Remove)/ }).count(), 0);
      await screen(page, 'participants-viewer');
      await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Report' }).click();
      await page.getByRole('table', { name: "Each step's emails and what became of them" }).getByRole('row', { name: /Hello/ }).waitFor();
      await screen(page, 'report-viewer');
      await page.done();
    });
  });
