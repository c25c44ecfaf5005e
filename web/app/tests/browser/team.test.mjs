// Team: name and add-on state, members and roles, invitations, API keys shown
// once; what each role may do.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Team', { concurrency: 1 }, () => {
    let env, owner, admin, member, viewer, ownerInvite;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      admin = await env.member(owner, 'admin', 'Adele');
      member = await env.member(owner, 'member', 'Mick');
      viewer = await env.member(owner, 'viewer', 'Vera');
      ownerInvite = `co-owner-${Date.now()}@example.com`;
      await env.invite(owner, ownerInvite, 'owner');
    });

    test('an owner changes roles and creates an API key shown once', async (t) => {
      const page = await env.page(t);
      await login(page, owner, '/app/team');
      await page.getByRole('heading', { name: "Team Owner's team" }).waitFor();
      // An owner may resend an owner's invitation.
      await page.getByRole('button', { name: `Resend to ${ownerInvite}` }).waitFor();
      await screen(page, 'team-owner');

      await page.getByRole('combobox', { name: /^Role of Mick/ }).selectOption('admin');
      await page.getByText(/Mick is now admin\./).waitFor();
      assert.equal(env.db(`SELECT role FROM team_members WHERE user_id = '${member.userId}'`), 'admin');

      await page.getByRole('button', { name: 'New API key' }).click();
      const d = page.getByRole('dialog', { name: 'New API key' });
      await d.getByLabel('Key name').fill('CRM sync');
      await d.getByRole('button', { name: 'Create key' }).click();
      const shown = page.getByRole('dialog', { name: 'Your new API key' });
      const key = await shown.getByLabel('API key').inputValue();
      assert.match(key, /^cbk_/);
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await shown.getByRole('button', { name: 'Copy key' }).click();
      await shown.getByText('Copied to the clipboard.').waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
      await screen(page, 'api-key-created');
      // The key works against the public API.
      const r = await fetch(`${env.url}/api/v1/books`, { headers: { Authorization: `Bearer ${key}` } });
      assert.equal(r.status, 200);
      await shown.getByRole('button', { name: 'Done' }).click();
      // Once closed, the key is gone from the page: only its prefix stays.
      assert.equal(await page.getByText(key).count(), 0);
      await page.getByRole('row', { name: /CRM sync/ }).waitFor();

      await page.getByRole('button', { name: 'Revoke CRM sync' }).click();
      await page.getByRole('dialog', { name: 'Revoke CRM sync?' }).getByRole('button', { name: 'Revoke key' }).click();
      await page.getByText('The key CRM sync was revoked.').waitFor();
      assert.equal((await fetch(`${env.url}/api/v1/books`, { headers: { Authorization: `Bearer ${key}` } })).status, 401);
      await page.done();
    });

    test('an admin manages members but cannot hand out or touch the owner role', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/team');
      await page.getByRole('button', { name: 'New API key' }).waitFor();
      const role = page.getByRole('combobox', { name: /^Role of Vera/ });
      // allTextContents does not wait: the members must be there first.
      await role.waitFor();
      const options = await role.locator('option').allTextContents();
      assert.deepEqual(options, ['Viewer', 'Member', 'Admin']);
      // The owner's row has no control for an admin.
      assert.equal(await page.getByRole('combobox', { name: /^Role of Owner/ }).count(), 0);
      // An admin invites, but not owners; an owner's pending invitation can be revoked, not resent.
      await page.getByRole('button', { name: `Revoke invitation of ${ownerInvite}` }).waitFor();
      assert.equal(await page.getByRole('button', { name: `Resend to ${ownerInvite}` }).count(), 0);
      await page.getByRole('button', { name: 'Invite someone' }).click();
      const invite = page.getByRole('dialog', { name: 'Invite someone' });
      // allTextContents does not wait: the dialog must be open first.
      await invite.getByLabel('Role').waitFor();
      assert.deepEqual(await invite.getByLabel('Role').locator('option').allTextContents(), ['Viewer', 'Member', 'Admin']);
      await screen(page, 'team-admin');
      await invite.getByRole('button', { name: 'Cancel' }).click();

      await page.getByRole('button', { name: /^Remove Vera/ }).click();
      await page.getByRole('dialog', { name: /^Remove Vera/ }).getByRole('button', { name: 'Remove member' }).click();
      await page.getByText(/Vera was removed from the team\./).waitFor();
      assert.equal(env.db(`SELECT count(*) FROM team_members WHERE user_id = '${viewer.userId}'`), '0');
      await env.join(owner, viewer, 'viewer');
      await page.done();
    });

    test('members and viewers see the team without controls, and why', async (t) => {
      await env.api('PATCH', `/api/teams/${owner.teamId}/members/${member.userId}`, { token: owner.token, body: { role: 'member' } });
      for (const [who, name] of [
        [member, 'team-member'],
        [viewer, 'team-viewer'],
      ]) {
        const page = await env.page(t);
        await login(page, who, '/app/team');
        await page.getByRole('heading', { name: "Team Owner's team" }).waitFor();
        await page.getByText('Needs the admin role or higher. API keys let programs use the API on the team\'s behalf.').waitFor();
        await page.getByText('Needs the admin role or higher. Invitations bring new people into the team.').waitFor();
        assert.equal(await page.getByRole('table', { name: 'Pending invitations' }).count(), 0);
        // No role to change (the header's book switcher aside).
        assert.equal(await page.getByRole('main').getByRole('combobox').count(), 0);
        assert.equal(await page.getByRole('button', { name: /^(Remove|Rename|New API key|Start|Buy|Invite|Resend|Revoke)/ }).count(), 0);
        await screen(page, name);
        await page.done();
      }
    });
  });
