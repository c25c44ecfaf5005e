// Address book sync: app passwords managed from the account menu (create,
// shown once, last use, revoke) and the book's "Sync with your phone"
// page, whose server address, username and app password sign a CardDAV
// client in (a PROPFIND over HTTP Basic, as a phone sends).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

const propfind = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><d:current-user-principal/></d:prop></d:propfind>';

/** dav sends a PROPFIND signed in with email and password; it answers the status and body. */
async function dav(url, email, password) {
  const r = await fetch(url, {
    method: 'PROPFIND',
    headers: { Authorization: 'Basic ' + Buffer.from(`${email}:${password}`).toString('base64'), Depth: '1', 'Content-Type': 'application/xml' },
    body: propfind,
  });
  return { status: r.status, body: await r.text() };
}

export default () =>
  describe('Address book sync', { concurrency: 1 }, () => {
    let env;
    before(async () => (env = await start()));

    test('app passwords: created from the account menu, shown once, listed with their last use, revoked', async (t) => {
      const ann = await env.signup('Dav');
      await env.api('POST', '/api/books', { token: ann.token, body: { team_id: ann.teamId, name: 'Friends' } });
      const page = await env.page(t);
      await login(page, ann);
      await page.getByRole('button', { name: /account menu/ }).click();
      await page.getByRole('link', { name: 'App passwords' }).click();
      await page.getByRole('heading', { name: 'App passwords', exact: true }).waitFor();
      await page.getByRole('button', { name: 'Create app password' }).click();
      await page.locator('[aria-invalid="true"]').waitFor();
      await page.getByLabel('Device name').fill('Work phone');
      await page.getByRole('button', { name: 'Create app password' }).click();
      const password = await page.getByRole('textbox', { name: 'App password', exact: true }).inputValue();
      assert.match(password, /^[a-z0-9]{5}(-[a-z0-9]{5}){3}$/);
      await screen(page, 'app-password-created');
      const table = page.getByRole('table', { name: 'Your app passwords' });
      await table.getByRole('cell', { name: 'Work phone', exact: true }).waitFor();
      await table.getByRole('cell', { name: 'Never', exact: true }).waitFor();

      const home = `${env.url}/dav/${ann.userId}/books/`;
      const signedIn = await dav(home, ann.email, password);
      assert.equal(signedIn.status, 207);
      assert.match(signedIn.body, /<d:displayname>Friends<\/d:displayname>/);
      // Shown once: after Done, the password is nowhere on the page.
      await page.getByRole('button', { name: 'Done' }).click();
      await page.reload();
      await table.getByRole('cell', { name: 'Work phone', exact: true }).waitFor();
      assert.equal(await page.getByText(password).count(), 0);
      assert.equal(await table.getByRole('cell', { name: 'Never', exact: true }).count(), 0, 'last use is shown after a sign-in');

      await table.getByRole('button', { name: 'Revoke Work phone' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('“Work phone” is revoked').waitFor();
      await table.getByText('No app passwords yet.').waitFor();
      assert.equal((await dav(home, ann.email, password)).status, 401);
    });

    test('the book\'s "Sync with your phone" page: its server address, username and a new app password sign a client in', async (t) => {
      const bob = await env.signup('Phone');
      const book = (await env.api('POST', '/api/books', { token: bob.token, body: { team_id: bob.teamId, name: 'Clients' } })).data;
      const page = await env.page(t);
      await login(page, bob, `/app/books/${book.id}/contacts`);
      await page.getByRole('link', { name: 'Sync with your phone' }).click();
      await page.getByRole('heading', { name: 'Sync with your phone' }).waitFor();
      const server = await page.getByLabel('Server address').inputValue();
      assert.equal(server, `${env.url}/dav/`);
      assert.equal(await page.getByLabel('Username').inputValue(), bob.email);
      const bookURL = await page.getByLabel('Address book URL').inputValue();
      for (const h of ['iPhone, iPad and Mac', 'Android (DAVx5)', 'Thunderbird']) await page.getByRole('heading', { name: h }).waitFor();
      await page.getByLabel('Device name').fill('Pixel');
      await page.getByRole('button', { name: 'Create app password' }).click();
      const password = await page.getByRole('textbox', { name: 'App password', exact: true }).inputValue();
      await screen(page, 'phone-sync');

      // Discovery from the server address, as a client does.
      const wk = await fetch(`${env.url}/.well-known/carddav`, { redirect: 'manual' });
      assert.equal(wk.status, 301);
      const root = await dav(server, bob.email, password);
      assert.equal(root.status, 207);
      assert.match(root.body, new RegExp(`/dav/${bob.userId}/`));
      const ab = await dav(bookURL, bob.email, password);
      assert.equal(ab.status, 207);
      assert.match(ab.body, /<d:displayname>Clients<\/d:displayname>/);
      // The account password does not work there.
      assert.equal((await dav(bookURL, bob.email, bob.password)).status, 401);
    });
  });
