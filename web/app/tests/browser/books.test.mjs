// Books: the list with contact counts, create and edit in the dialog,
// delete with confirmation; what each role may do.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, seedContacts, start } from './harness.mjs';

export default () =>
  describe('Books', { concurrency: 1 }, () => {
    let env;
    before(async () => (env = await start()));

    test('an owner creates, edits and deletes a book', async (t) => {
      const ann = await env.signup('Ann');
      const page = await env.page(t);
      await login(page, ann, '/app/books');
      const opener = page.getByRole('button', { name: 'New book' });
      await opener.click();
      const dialog = page.getByRole('dialog', { name: 'New book' });
      await dialog.waitFor();
      // Focus is inside the dialog, on its first field.
      assert.equal(await page.evaluate(() => document.activeElement?.closest('dialog') !== null), true);
      await dialog.getByRole('button', { name: 'Create book' }).click();
      assert.equal(await dialog.getByLabel('Name').getAttribute('aria-invalid'), 'true');
      await screen(page, 'book-dialog-error');
      await dialog.getByLabel('Name').fill('Customers');
      await dialog.getByLabel('Icon').selectOption('briefcase');
      await dialog.getByLabel('Each email address only once in this book').check();
      await dialog.getByRole('button', { name: 'Create book' }).click();
      await page.getByRole('status').filter({ hasText: 'Book “Customers” created.' }).waitFor();
      // Focus returns to the button that opened the dialog (when the dialog has gone, which may be a frame after the notice).
      await page.waitForFunction(() => document.activeElement?.textContent === 'New book', null, { timeout: 2000 });
      assert.equal(env.db(`SELECT icon || ' ' || enforce_unique_emails FROM books WHERE name = 'Customers'`), 'briefcase true');

      const id = env.db(`SELECT id FROM books WHERE name = 'Customers'`);
      seedContacts(env, id, 3);
      await page.reload();
      const row = page.getByRole('row', { name: /Customers/ });
      assert.match(await row.innerText(), /\b3\b/);
      assert.match(await row.innerText(), /Enforced/);
      await screen(page, 'books');

      await row.getByRole('button', { name: 'Edit Customers' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit Customers' });
      await edit.getByLabel('Name').fill('Clients');
      await edit.getByRole('button', { name: 'Save book' }).click();
      await page.getByRole('row', { name: /Clients/ }).waitFor();

      // Escape closes a dialog without saving.
      await page.getByRole('button', { name: 'Delete Clients' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete Clients?' });
      await confirm.waitFor();
      await screen(page, 'book-delete');
      await page.keyboard.press('Escape');
      await confirm.waitFor({ state: 'hidden' });
      assert.equal(env.db(`SELECT count(*) FROM books WHERE name = 'Clients'`), '1');

      await page.getByRole('button', { name: 'Delete Clients' }).click();
      await confirm.getByRole('button', { name: 'Delete book and 3 contacts' }).click();
      await page.getByRole('status').filter({ hasText: 'deleted' }).waitFor();
      assert.equal(env.db(`SELECT count(*) FROM books WHERE name = 'Clients'`), '0');
      await page.done();
    });

    test('the keyboard alone creates a book', async (t) => {
      const kim = await env.signup('Kim');
      const page = await env.page(t);
      await login(page, kim, '/app/books');
      await page.getByRole('heading', { name: 'Books' }).waitFor();
      // Tab from the page heading (focused after navigation) to the New book button.
      for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'New book'; i++) await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.getByRole('dialog', { name: 'New book' }).waitFor();
      await page.keyboard.type('Typed');
      await page.keyboard.press('Enter');
      await page.getByRole('status').filter({ hasText: 'Book “Typed” created.' }).waitFor();
      assert.equal(env.db(`SELECT count(*) FROM books WHERE name = 'Typed' AND team_id = '${kim.teamId}'`), '1');
      await page.done();
    });

    test('a member may create and edit but not delete; a viewer only reads', async (t) => {
      const owner = await env.signup('Owner');
      await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Shared' } });
      const member = await env.member(owner, 'member');
      const viewer = await env.member(owner, 'viewer');

      const page = await env.page(t);
      await login(page, member, '/app/books');
      await page.getByRole('button', { name: 'New book' }).waitFor();
      await page.getByRole('button', { name: 'Edit Shared' }).waitFor();
      const del = page.getByRole('button', { name: 'Delete Shared' });
      assert.equal(await del.isDisabled(), true);
      assert.match(await del.getAttribute('title'), /admin/);
      await screen(page, 'books-member');
      await page.done();

      const vpage = await env.page(t);
      await login(vpage, viewer, '/app/books');
      await vpage.getByRole('row', { name: /Shared/ }).waitFor();
      for (const name of ['New book', 'Edit Shared', 'Delete Shared']) assert.equal(await vpage.getByRole('button', { name }).count(), 0, name);
      await screen(vpage, 'books-viewer');
      await vpage.done();
    });
  });
