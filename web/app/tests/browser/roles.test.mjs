// Every screen of the workspace for each role of one team (owner, admin,
// member, viewer): the controls a role may use are there and work, those it
// may not are absent or disabled with the reason, a viewer meets no write
// control at all; axe-core and a screenshot (<screen>-as-<role>.png) on each.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

// What a write control is called on any screen; a viewer must meet none.
const writeNames = /^(New|Edit|Delete|Remove|Rename|Star|☆|★ Starred|Move|Invite|Resend|Revoke|Start|Buy|Add|Set|Save|Create|Select|Show these|Leave)\b/;

/**
 * expect checks one control by role and name: 'on' (shown and usable),
 * 'off' (shown, disabled, its title giving the reason) or 'none' (absent).
 */
async function expect(page, kind, name, state) {
  const control = page.getByRole(kind, { name, exact: true });
  if (state === 'none') {
    assert.equal(await control.count(), 0, `${kind} ${name} is not offered`);
    return;
  }
  await control.first().waitFor();
  assert.equal(await control.first().isDisabled(), state === 'off', `${kind} ${name} is ${state === 'off' ? 'disabled' : 'usable'}`);
  if (state === 'off') assert.match((await control.first().getAttribute('title')) ?? '', /Needs the \w+ role or higher/, `${name} says why it is disabled`);
}

/** writeControls lists the enabled controls on the page that change something. */
async function writeControls(page) {
  const names = await page.evaluate(() =>
    [...document.querySelectorAll('button, a.button, input, select, textarea')]
      .filter((e) => !e.disabled && e.getClientRects().length > 0)
      .map((e) => (e.type === 'checkbox' ? `Select (checkbox ${e.getAttribute('aria-label') ?? e.id})` : (e.getAttribute('aria-label') ?? e.textContent ?? '').trim())),
  );
  return names.filter((n) => writeNames.test(n));
}

export default () =>
  describe('Every screen for each role', { concurrency: 1 }, () => {
    let env, owner, book, contact;
    const people = {};
    before(async () => {
      env = await start();
      owner = await env.signup('Orla');
      people.owner = owner;
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Shared' } })).data.id;
      await env.api('POST', `/api/books/${book}/labels`, { token: owner.token, body: { name: 'Prime', color: '#2563eb' } });
      await env.api('POST', `/api/books/${book}/fields`, { token: owner.token, body: { key: 'tier', name: 'Tier', type: 'text' } });
      contact = (await env.api('POST', '/api/contacts', { token: owner.token, book, body: { first_name: 'Ada', last_name: 'Lovelace', emails: [{ address: 'ada@example.com' }] } })).data.id;
      await env.api('POST', '/api/contacts', { token: owner.token, book, body: { first_name: 'Alan', last_name: 'Turing' } });
      // The contact is in a campaign, which its page lists for every role.
      await env.api('POST', `/api/teams/${owner.teamId}/addons/campaigns/trial`, { token: owner.token });
      const campaign = (await env.api('POST', '/api/campaigns', { token: owner.token, book, body: { name: 'Welcome series', description: 'First week' } })).data.id;
      await env.api('POST', `/api/campaigns/${campaign}/participants`, { token: owner.token, book, body: { contact_ids: [contact] } });
      people.admin = await env.member(owner, 'admin', 'Abe');
      people.member = await env.member(owner, 'member', 'Meg');
      people.viewer = await env.member(owner, 'viewer', 'Vic');
    });

    // Each role's expected state of the controls of each screen.
    const may = {
      owner: { write: 'on', admin: 'on', deleteBook: 'on' },
      admin: { write: 'on', admin: 'on', deleteBook: 'on' },
      member: { write: 'on', admin: 'none', deleteBook: 'off' },
      viewer: { write: 'none', admin: 'none', deleteBook: 'none' },
    };

    for (const role of ['owner', 'admin', 'member', 'viewer']) {
      test(`as ${role}`, async (t) => {
        const who = people[role];
        const m = may[role];
        const page = await env.page(t);
        const check = async (name) => {
          // The same check finds the write controls of the roles that have them (it can fail).
          if (role === 'viewer') assert.deepEqual(await writeControls(page), [], `a viewer meets no write control on ${name}`);
          else if (name !== 'not-found' && ((name !== 'team' && name !== 'billing') || m.admin === 'on')) assert.notDeepEqual(await writeControls(page), [], `${role} has write controls on ${name}`);
          await screen(page, `${name}-as-${role}`);
        };

        await login(page, who, '/app/books');
        await page.getByRole('row', { name: /Shared/ }).waitFor();
        await expect(page, 'button', 'New book', m.write);
        await expect(page, 'button', 'Edit Shared', m.write);
        await expect(page, 'button', 'Delete Shared', m.deleteBook);
        await check('books');

        await page.getByRole('link', { name: 'Shared', exact: true }).click();
        await page.getByText('2 contacts').waitFor();
        await expect(page, 'button', 'New contact', m.write);
        await expect(page, 'button', 'Star Ada Lovelace', m.write);
        await expect(page, 'checkbox', 'Select Ada Lovelace', m.write);
        await expect(page, 'checkbox', 'Select all on this page', m.write);
        if (m.write === 'on') {
          await page.getByRole('checkbox', { name: 'Select Ada Lovelace' }).check();
          const bar = page.getByRole('region', { name: 'Selected contacts' });
          for (const name of ['Add label', 'Remove label', 'Set field', 'Delete']) await expect(bar, 'button', name, 'on');
        }
        await check('contacts');

        await page.getByRole('link', { name: 'Ada Lovelace' }).click();
        await page.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
        const campaigns = page.getByRole('table', { name: 'Campaigns of this contact' });
        await campaigns.getByRole('row', { name: /Welcome series/ }).waitFor();
        assert.deepEqual(await campaigns.getByRole('row', { name: /Welcome series/ }).getByRole('cell').allInnerTexts(), ['Welcome series', 'Draft', 'In progress', new Date().toLocaleDateString('en-US'), '—']);
        await expect(page, 'button', '☆ Star', m.write);
        await expect(page, 'link', 'Edit contact', m.write);
        await expect(page, 'button', 'Delete contact', m.write);
        await check('contact-page');

        await page.goto(`/app/contacts/${contact}/edit`);
        if (m.write === 'on') {
          // Save waits for the book to load; it must become usable, not be usable at once.
          await page.getByRole('button', { name: 'Save contact', exact: true }).and(page.locator('button:enabled')).waitFor();
          await expect(page, 'button', 'Save contact', 'on');
          assert.equal(await page.getByLabel('First name').inputValue(), 'Ada');
        } else {
          await page.getByText('Needs the member role or higher. You can view contacts but not change them.').waitFor();
          assert.equal(await page.getByRole('textbox').count(), 0);
        }
        await check('contact-editor');

        await page.goto(`/app/books/${book}/labels`);
        await page.getByRole('heading', { name: 'Labels and fields of Shared' }).waitFor();
        await page.getByText('Prime').first().waitFor();
        for (const name of ['New label', 'New field', 'Edit Prime', 'Delete Prime']) await expect(page, 'button', name, m.write);
        await check('labels');

        await page.getByRole('link', { name: 'Team', exact: true }).click();
        await page.getByRole('heading', { name: "Team Orla's team" }).waitFor();
        await page.getByRole('row', { name: /Vic/ }).waitFor();
        // The team's facts load on their own; absent controls count only once they are there.
        await page.getByRole('definition').filter({ hasText: /^Trial until/ }).waitFor();
        for (const name of ['Rename team', 'Invite someone', 'New API key']) await expect(page, 'button', name, m.admin);
        // Admins change the roles of everyone but the owners; owners, everyone's.
        await expect(page, 'combobox', 'Role of Meg', m.admin);
        await expect(page, 'combobox', 'Role of Orla', role === 'owner' ? 'on' : 'none');
        if (m.admin === 'none') {
          await page.getByText('Needs the admin role or higher. Invitations bring new people into the team.').waitFor();
          await page.getByText("Needs the admin role or higher. API keys let programs use the API on the team's behalf.").waitFor();
        }
        await check('team');

        // Billing: the trial is running; only buying is left, and that needs an admin.
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Billing' }).click();
        await page.getByRole('heading', { name: 'Billing' }).waitFor();
        await page.getByRole('definition').filter({ hasText: /^Trial until/ }).waitFor();
        await expect(page, 'button', 'Buy the add-on', m.admin);
        if (m.admin === 'none') await page.getByText('Needs the admin role or higher. Admins buy the add-on.').waitFor();
        await check('billing');

        await page.goto('/app/no-such-screen');
        await page.getByRole('heading', { name: 'Page not found' }).waitFor();
        await page.getByRole('link', { name: 'Go to your contacts' }).waitFor();
        await check('not-found');
        await page.done();
      });
    }
  });
