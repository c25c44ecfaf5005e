// Sign up, log in, log out, the user menu and the team switcher.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Sign up, log in, log out', { concurrency: 1 }, () => {
    let env;
    before(async () => (env = await start()));

    test('sign up shows errors at the fields, then creates the account and its team', async (t) => {
      const page = await env.page(t);
      await page.goto('/');
      await page.waitForURL('**/app/login');
      await screen(page, 'login');
      await page.getByRole('link', { name: 'Create an account' }).click();
      await page.getByRole('button', { name: 'Sign up' }).click();
      // Every empty field says what it needs, at the field, and the first takes focus.
      const name = page.getByLabel('Name', { exact: true });
      await assert.doesNotReject(name.and(page.locator('[aria-invalid="true"]')).waitFor());
      // Focus moves a frame after the errors show.
      await page.waitForFunction(() => document.activeElement?.getAttribute('autocomplete') === 'name', null, { timeout: 2000 });
      for (const [label, message] of [
        ['Name', 'Enter your name.'],
        ['Email', 'Enter an email address.'],
        ['Password', 'Use at least 8 characters.'],
        ['Team name', 'Enter a name for your team.'],
      ]) {
        const field = page.getByLabel(label, { exact: true });
        assert.equal(await field.getAttribute('aria-invalid'), 'true', label);
        const described = await field.getAttribute('aria-describedby');
        assert.match(await page.locator(`[id="${described.split(' ').pop()}"]`).innerText(), new RegExp(message.replace('.', '\\.')), label);
      }
      await screen(page, 'signup-errors');

      const email = `ann-${Date.now()}@example.com`;
      await name.fill('Ann Lee');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByLabel('Team name').fill('Acme Sales');
      await page.getByRole('button', { name: 'Sign up' }).click();
      // A new team has no book: the app opens the books screen with its empty state.
      await page.getByRole('heading', { name: 'Books' }).waitFor();
      await page.getByText('No books yet').waitFor();
      assert.equal(env.db(`SELECT t.name FROM team_members m JOIN teams t ON t.id = m.team_id JOIN users u ON u.id = m.user_id WHERE u.email = '${email}' AND m.role = 'owner'`), 'Acme Sales');
      await screen(page, 'books-empty');

      // A reload keeps the session.
      await page.reload();
      await page.getByRole('heading', { name: 'Books' }).waitFor();
      await page.done();
    });

    test('sign up with an address already registered shows the API error', async (t) => {
      const taken = await env.signup('taken');
      const page = await env.page(t);
      await page.goto('/app/signup');
      await page.getByLabel('Name', { exact: true }).fill('Someone');
      await page.getByLabel('Email').fill(taken.email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByLabel('Team name').fill('Other');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByRole('alert').filter({ hasText: /already|exists|registered/i }).waitFor();
      await page.done();
    });

    test('log in, the user menu, log out', async (t) => {
      const ann = await env.signup('Ann');
      const page = await env.page(t);
      await page.goto('/app/login');
      await page.getByLabel('Email').fill(ann.email);
      await page.getByLabel('Password').fill('wrong password');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('alert').waitFor();
      assert.equal(new URL(page.url()).pathname, '/app/login');

      await page.getByLabel('Password').fill(ann.password);
      await page.getByRole('button', { name: 'Log in' }).click();
      // The app settles on the books screen (whose heading takes focus) first.
      await page.getByRole('heading', { name: 'Books' }).waitFor();
      const menu = page.getByRole('button', { name: /account menu/ });
      await menu.click();
      assert.equal(await menu.getAttribute('aria-expanded'), 'true');
      await page.getByText(ann.email).waitFor();
      await screen(page, 'user-menu');
      // Escape closes the menu and gives focus back to its button.
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: /account menu/, expanded: false }).waitFor();
      await page.waitForFunction(() => /account menu/.test(document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent ?? ''), null, { timeout: 2000 });
      await menu.click();
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('button', { name: 'Log in' }).waitFor();
      // After logging out, app routes lead back to the login, and come back after it.
      await page.goto('/app/team');
      await page.waitForURL(/\/app\/login\?next=%2Fapp%2Fteam/);
      await page.getByLabel('Email').fill(ann.email);
      await page.getByLabel('Password').fill(ann.password);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: /^Team / }).waitFor();
      await page.done();
    });

    test('the team switcher moves between teams and shows each team’s books', async (t) => {
      const ann = await env.signup('Ann');
      const bob = await env.signup('Bob');
      await env.api('POST', '/api/books', { token: ann.token, body: { team_id: ann.teamId, name: 'Ann book' } });
      await env.api('POST', '/api/books', { token: bob.token, body: { team_id: bob.teamId, name: 'Bob book' } });
      await env.join(bob, ann, 'viewer');
      const page = await env.page(t);
      // Ann's books answer late the first time: switching teams while it is
      // on the way must still show Bob's books, not wait for Ann's forever.
      let late = true;
      await page.route(`**/api/books?team_id=${ann.teamId}`, async (r) => {
        if (late) await new Promise((resolve) => setTimeout(resolve, 1000));
        late = false;
        await r.continue();
      });
      const lateAnswer = page.waitForResponse((r) => r.url().endsWith(`/api/books?team_id=${ann.teamId}`));
      await login(page, ann);
      const switcher = page.getByRole('combobox', { name: 'Team' });
      await switcher.selectOption({ label: "Bob's team" });
      await page.getByRole('heading', { name: 'Bob book' }).waitFor();
      // Once the late answer is in and rendered (two frames), Bob's book is still on the screen.
      await (await lateAnswer).finished();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await page.getByRole('heading', { name: 'Bob book' }).waitFor({ timeout: 1000 });
      assert.equal(await page.getByRole('combobox', { name: 'Book' }).inputValue(), env.db(`SELECT id FROM books WHERE name = 'Bob book'`));
      await screen(page, 'team-switcher');
      // A viewer in Bob's team: no write control on the contacts screen.
      assert.equal(await page.getByRole('button', { name: 'New contact' }).count(), 0);
      await switcher.selectOption({ label: "Ann's team" });
      await page.getByRole('heading', { name: 'Ann book' }).waitFor();
      await page.getByRole('button', { name: 'New contact' }).waitFor();
      await page.done();
    });
  });
