// People: invitations sent from the Team screen and accepted from the
// emailed link, password reset and change, and the cookie session (its
// flags, CSRF, logout ending it on the server, a refused session leading to
// the login and back).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

/** status is the answer to a request carrying only the given Cookie header. */
async function status(env, method, path, cookie, headers = {}) {
  const r = await fetch(env.url + path, { method, headers: { Cookie: cookie, ...headers } });
  return r.status;
}

/** fieldError is the error text tied to the field labelled label, asserting it is marked invalid. */
async function fieldError(page, label) {
  const field = page.getByLabel(label, { exact: true });
  await field.and(page.locator('[aria-invalid="true"]')).waitFor();
  const ids = (await field.getAttribute('aria-describedby')).split(' ');
  return page.locator(`[id="${ids[ids.length - 1]}"]`).innerText();
}

export default () =>
  describe('People', { concurrency: 1 }, () => {
    let env;
    before(async () => (env = await start()));

    test('an invitation sent from the Team screen is accepted from the email by a new account', async (t) => {
      const owner = await env.signup('Olga');
      await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Leads' } });
      const page = await env.page(t);
      await login(page, owner, '/app/team');
      await page.getByRole('button', { name: 'Invite someone' }).click();
      const dialog = page.getByRole('dialog', { name: 'Invite someone' });
      await dialog.getByLabel('Role').waitFor();
      assert.deepEqual(await dialog.getByLabel('Role').locator('option').allTextContents(), ['Viewer', 'Member', 'Admin', 'Owner']);
      const email = `nina-${Date.now()}@example.com`;
      await dialog.getByLabel('Email').fill(email);
      await dialog.getByLabel('Role').selectOption('member');
      await screen(page, 'invite-dialog');
      await dialog.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByText(`Invitation sent to ${email}.`).waitFor();
      await page.getByRole('table', { name: 'Pending invitations' }).getByRole('row', { name: new RegExp(email) }).waitFor();

      const link = await env.link(email, '/app/invitations/accept');
      const guest = await env.page(t);
      await guest.goto(link);
      await guest.getByRole('heading', { name: "Join Olga's team" }).waitFor();
      await guest.getByText(email, { exact: true }).waitFor();
      await guest.getByRole('definition').filter({ hasText: /^Member$/ }).waitFor();
      await guest.getByRole('button', { name: 'Create account and join' }).click();
      assert.equal(await fieldError(guest, 'Name'), 'Enter your name.');
      await screen(guest, 'invitation-new-account');
      await guest.getByLabel('Name', { exact: true }).fill('Nina');
      await guest.getByLabel('Password').fill('another horse battery');
      await guest.getByRole('button', { name: 'Create account and join' }).click();
      // The new member lands in the team's contacts, as a member.
      await guest.getByRole('heading', { name: 'Leads' }).waitFor();
      assert.match(new URL(guest.url()).pathname, /^\/app\/books\/[^/]+\/contacts$/);
      await guest.getByRole('button', { name: /account menu/ }).click();
      await guest.getByText("Member of Olga's team").waitFor();
      assert.equal(env.db(`SELECT m.role FROM team_members m JOIN users u ON u.id = m.user_id WHERE u.email = '${email}'`), 'member');
      // The account has no team of its own.
      assert.equal(env.db(`SELECT count(*) FROM team_members m JOIN users u ON u.id = m.user_id WHERE u.email = '${email}'`), '1');
      await guest.done();

      // The invitation is no longer pending; the link works once.
      await page.reload();
      await page.getByRole('table', { name: 'Pending invitations' }).getByText('No pending invitations.').waitFor();
      await page.getByRole('table', { name: 'Members of the team' }).getByRole('row', { name: new RegExp(email) }).waitFor();
      await page.goto(link);
      await page.getByRole('heading', { name: 'This invitation no longer works' }).waitFor();
      await screen(page, 'invitation-gone');
      await page.done();
    });

    test('an existing account accepts by logging in as the invited address', async (t) => {
      const owner = await env.signup('Otto');
      const existing = await env.signup('Erin');
      const token = await env.invite(owner, existing.email, 'viewer');
      const page = await env.page(t);
      // Signed in as someone else, the screen says so and offers to log out first.
      await login(page, owner);
      await page.goto(`/app/invitations/accept?token=${encodeURIComponent(token)}`);
      await page.getByText(`You are logged in as ${owner.email}, but the invitation is for ${existing.email}.`).waitFor();
      await screen(page, 'invitation-other-account');
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('button', { name: 'Log in and join' }).waitFor();
      await page.getByRole('heading', { name: "Join Otto's team" }).waitFor();
      assert.equal(await page.getByLabel('Email').inputValue(), existing.email);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Log in and join' }).click();
      assert.match(await fieldError(page, 'Password'), /password/i);
      await screen(page, 'invitation-existing-account');
      await page.getByLabel('Password').fill(existing.password);
      await page.getByRole('button', { name: 'Log in and join' }).click();
      // The joined team opens; the account keeps its own team too.
      await page.getByRole('heading', { name: 'Books' }).waitFor();
      const switcher = page.getByRole('combobox', { name: 'Team' });
      assert.equal(await switcher.locator('option:checked').innerText(), "Otto's team");
      assert.deepEqual((await switcher.locator('option').allTextContents()).sort(), ["Erin's team", "Otto's team"]);
      assert.equal(env.db(`SELECT role FROM team_members WHERE user_id = '${existing.userId}' AND team_id = '${owner.teamId}'`), 'viewer');
      await page.done();
    });

    test('signed in as the invited address, joining is one button', async (t) => {
      const owner = await env.signup('Ivy');
      const user = await env.signup('Jon');
      const token = await env.invite(owner, user.email, 'member');
      const page = await env.page(t);
      await login(page, user);
      await page.goto(`/app/invitations/accept?token=${encodeURIComponent(token)}`);
      await page.getByText(`You are logged in as ${user.email}.`).waitFor();
      await page.getByRole('button', { name: "Join Ivy's team" }).click();
      await page.getByRole('heading', { name: 'Books' }).waitFor();
      assert.equal(await page.getByRole('combobox', { name: 'Team' }).locator('option:checked').innerText(), "Ivy's team");
      assert.equal(env.db(`SELECT role FROM team_members WHERE user_id = '${user.userId}' AND team_id = '${owner.teamId}'`), 'member');
      await page.done();
    });

    test('resending replaces the link and revoking kills it', async (t) => {
      const owner = await env.signup('Rhea');
      const email = `pat-${Date.now()}@example.com`;
      const first = await env.invite(owner, email, 'admin');
      const page = await env.page(t);
      await login(page, owner, '/app/team');
      await page.getByRole('button', { name: `Resend to ${email}` }).click();
      await page.getByText(`A new invitation went to ${email}; the earlier link no longer works.`).waitFor();
      const second = new URL(await env.link(email, '/app/invitations/accept')).searchParams.get('token');
      assert.notEqual(second, first);
      assert.equal((await fetch(`${env.url}/api/invitations/${first}`)).status, 404);
      assert.equal((await fetch(`${env.url}/api/invitations/${second}`)).status, 200);

      await page.getByRole('button', { name: `Revoke invitation of ${email}` }).click();
      const confirm = page.getByRole('dialog', { name: `Revoke the invitation of ${email}?` });
      await screen(page, 'invitation-revoke');
      await confirm.getByRole('button', { name: 'Revoke invitation' }).click();
      await page.getByText(`The invitation of ${email} was revoked.`).waitFor();
      assert.equal((await fetch(`${env.url}/api/invitations/${second}`)).status, 404);
      await page.getByRole('table', { name: 'Pending invitations' }).getByText('No pending invitations.').waitFor();
      await page.done();
    });

    test('forgot and reset password through the emailed link end the old sessions', async (t) => {
      const user = await env.signup('Fred');
      const old = await env.page(t);
      await login(old, user);

      const page = await env.page(t);
      await page.goto('/app/login');
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
      await screen(page, 'forgot-password');
      // An unknown address gets the same answer, and no email.
      const nobody = `nobody-${Date.now()}@example.com`;
      await page.getByLabel('Email').fill(nobody);
      await page.getByRole('button', { name: 'Send the link' }).click();
      const unknownAnswer = await page.getByRole('status').filter({ hasText: nobody }).innerText();
      await page.goto('/app/forgot-password');
      await page.getByLabel('Email').fill(user.email);
      await page.getByRole('button', { name: 'Send the link' }).click();
      const knownAnswer = await page.getByRole('status').filter({ hasText: user.email }).innerText();
      assert.equal(knownAnswer.replace(user.email, 'X'), unknownAnswer.replace(nobody, 'X'));

      const link = await env.link(user.email, '/app/reset-password');
      // The unknown address was asked for first; by now its email would be there.
      await assert.rejects(env.link(nobody, '/app/reset-password', 500), /no email/);
      await page.goto(link);
      await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
      await page.getByLabel('New password').fill('short');
      await page.getByRole('button', { name: 'Set password' }).click();
      assert.equal(await fieldError(page, 'New password'), 'Use at least 8 characters.');
      await screen(page, 'reset-password');
      await page.getByLabel('New password').fill('a brand new password');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('heading', { name: 'Books' }).waitFor();

      // The session from before the reset is refused; the link worked once.
      assert.equal((await old.request.get('/api/me')).status(), 401);
      await old.done();
      await page.goto(link);
      await page.getByLabel('New password').fill('yet another password');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('heading', { name: 'This link no longer works' }).waitFor();
      await page.getByRole('link', { name: 'Ask for a new link' }).waitFor();
      await screen(page, 'reset-password-gone');
      await page.done();
      await env.api('POST', '/api/auth/login', { body: { email: user.email, password: 'a brand new password' } });
    });

    test('change password from the user menu: a wrong current password is shown at the field', async (t) => {
      const user = await env.signup('Cara');
      const other = await env.page(t);
      await login(other, user);
      const page = await env.page(t);
      await login(page, user);
      await page.getByRole('button', { name: /account menu/ }).click();
      await page.getByRole('button', { name: 'Change password' }).click();
      const dialog = page.getByRole('dialog', { name: 'Change password' });
      await dialog.getByLabel('Current password').fill('not my password');
      await dialog.getByLabel('New password').fill('the next password');
      await dialog.getByRole('button', { name: 'Change password' }).click();
      assert.equal(await fieldError(page, 'Current password'), 'The current password is wrong.');
      await screen(page, 'change-password');
      await dialog.getByLabel('Current password').fill(user.password);
      await dialog.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Password changed. Your other sessions have ended.').waitFor();
      // This session goes on with its renewed cookies, writes included; the other one ended.
      await page.reload();
      await page.getByRole('heading', { name: 'Books' }).waitFor();
      await page.getByRole('button', { name: 'New book' }).click();
      await page.getByRole('dialog', { name: 'New book' }).getByLabel('Name').fill('After the change');
      await page.getByRole('dialog', { name: 'New book' }).getByRole('button', { name: 'Create book' }).click();
      await page.getByRole('status').filter({ hasText: 'Book “After the change” created.' }).waitFor();
      assert.equal((await other.request.get('/api/me')).status(), 401);
      await other.done();
      await env.api('POST', '/api/auth/login', { body: { email: user.email, password: 'the next password' } });
      await page.done();
    });

    test('the session is an HttpOnly SameSite=Strict cookie; writes need the CSRF header; logout ends it', async (t) => {
      const user = await env.signup('Lou');
      const page = await env.page(t);
      await login(page, user);
      const cookies = await page.context().cookies();
      const session = cookies.find((c) => c.name === 'cb_session');
      const csrf = cookies.find((c) => c.name === 'cb_csrf');
      assert.ok(session && csrf, 'both cookies are set');
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Strict');
      assert.equal(session.path, '/api');
      assert.equal(csrf.httpOnly, false);
      assert.equal(csrf.sameSite, 'Strict');
      // Nothing in the page's reach holds the login token.
      const reachable = await page.evaluate(() => document.cookie + JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }));
      assert.ok(!reachable.includes(session.value), 'the login token is readable by scripts');

      // A write without the CSRF header is refused; with it, it goes through.
      const write = (withHeader) =>
        page.evaluate(
          async ([team, token]) => {
            const headers = { 'Content-Type': 'application/json' };
            if (token) headers['X-CSRF-Token'] = token;
            const r = await fetch('/api/books', { method: 'POST', headers, body: JSON.stringify({ team_id: team, name: 'Via fetch' }) });
            return { status: r.status, body: await r.json() };
          },
          [user.teamId, withHeader ? csrf.value : ''],
        );
      const refused = await write(false);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'FORBIDDEN');
      assert.match(refused.body.error.message, /X-CSRF-Token/);
      assert.equal((await write(true)).status, 201);

      const cookie = `cb_session=${session.value}; cb_csrf=${csrf.value}`;
      assert.equal(await status(env, 'GET', '/api/me', cookie), 200);
      await page.getByRole('button', { name: /account menu/ }).click();
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('button', { name: 'Log in' }).waitFor();
      assert.deepEqual((await page.context().cookies()).map((c) => c.name).filter((n) => n.startsWith('cb_')), []);
      // The old cookie stops working on the server, not only in this browser.
      assert.equal(await status(env, 'GET', '/api/me', cookie), 401);
      assert.equal(await status(env, 'POST', '/api/auth/logout', cookie, { 'X-CSRF-Token': csrf.value }), 401);
      await page.done();
    });

    test('a session the server ended leads to the login and back to the screen', async (t) => {
      const user = await env.signup('Max');
      const page = await env.page(t);
      await login(page, user, '/app/team');
      await page.getByRole('heading', { name: "Team Max's team" }).waitFor();
      // Another device changes the password: every earlier session ends.
      const changed = 'changed elsewhere 1';
      await env.api('POST', '/api/auth/password', { token: user.token, body: { current_password: user.password, new_password: changed } });
      await page.reload();
      await page.waitForURL(/\/app\/login\?next=%2Fapp%2Fteam$/);
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill(changed);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: "Team Max's team" }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/app/team');
      await page.done();
    });
  });
