// Books: the list with contact counts, create and edit in the dialog,
// delete with confirmation; what each role may do; a new team without a
// book, whose navigation and book switcher are there all the same and lead
// to its first book.
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
    test('a new team without a book has every link and the switcher, and makes its first book from Contacts', async (t) => {
      const page = await env.page(t);
      const email = `first-${Date.now()}@example.com`;
      await page.goto('/app/signup');
      await page.getByLabel('Name', { exact: true }).fill('Fay First');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByLabel('Team name').fill('Fresh');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByRole('heading', { name: 'Books' }).waitFor();
      const team = env.db(`SELECT m.team_id FROM team_members m JOIN users u ON u.id = m.user_id WHERE u.email = '${email}'`);
      assert.equal(env.db(`SELECT count(*) FROM books WHERE team_id = '${team}'`), '0');

      // Every link of the navigation, in its order, though the team has no book.
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Settings', exact: true }).waitFor();
      assert.deepEqual(await nav.getByRole('link').allTextContents(), [
        'Contacts', 'Segments', 'Campaigns', 'Templates', 'Suppressions', 'Transactional', 'Imports', 'Forms', 'Books', 'Webhooks', 'Audit log', 'Team', 'Billing', 'Settings',
      ]);
      // The book switcher is there, with nothing to choose yet.
      const switcher = page.getByRole('combobox', { name: 'Book' });
      assert.deepEqual(await switcher.locator('option').allTextContents(), ['No book yet']);
      assert.equal(await switcher.locator('option').first().isDisabled(), true);
      await screen(page, 'books-none-navigation');

      // Each book section says the team has no book yet; Contacts offers the first.
      await nav.getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('heading', { name: 'Email templates' }).waitFor();
      await page.getByRole('heading', { name: 'Your team has no book yet' }).waitFor();
      await nav.getByRole('link', { name: 'Contacts' }).click();
      await page.getByRole('heading', { name: 'Contacts', exact: true }).waitFor();
      assert.equal(await nav.getByRole('link', { name: 'Contacts' }).getAttribute('aria-current'), 'page');
      await page.getByRole('heading', { name: 'Your team has no book yet' }).waitFor();
      await screen(page, 'contacts-no-book');
      await page.getByRole('button', { name: 'Create your first book' }).click();
      const dialog = page.getByRole('dialog', { name: 'New book' });
      await dialog.getByLabel('Name').fill('Leads');
      await dialog.getByRole('button', { name: 'Create book' }).click();

      // The new book's contacts open, and the links and the switcher point into it.
      await page.waitForURL(/\/app\/books\/[0-9a-f-]{36}\/contacts$/);
      const book = /books\/([0-9a-f-]{36})/.exec(page.url())[1];
      assert.equal(env.db(`SELECT name FROM books WHERE id = '${book}' AND team_id = '${team}'`), 'Leads');
      await page.getByRole('heading', { name: 'Leads' }).waitFor();
      await page.getByText('This book has no contacts yet').waitFor();
      await switcher.locator('option', { hasText: 'Leads' }).waitFor({ state: 'attached' });
      assert.equal(await switcher.inputValue(), book);
      await nav.getByRole('link', { name: 'Team' }).click();
      await page.getByRole('heading', { name: /^Team / }).waitFor();
      assert.equal(await nav.getByRole('link', { name: 'Settings' }).getAttribute('href'), `/app/books/${book}/settings`);
      await nav.getByRole('link', { name: 'Contacts' }).click();
      await page.waitForURL(`**/app/books/${book}/contacts`);
      await page.getByRole('heading', { name: 'Leads' }).waitFor();
      await page.getByRole('button', { name: 'New contact' }).waitFor();
      await page.done();
    });

    test('without a book, a section says who may create one; a book-less address opens the current book', async (t) => {
      const owner = await env.signup('Nora');
      const viewer = await env.member(owner, 'viewer', 'Vik');
      const page = await env.page(t);
      await login(page, viewer);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
      await page.getByRole('heading', { name: 'Campaigns', exact: true }).waitFor();
      await page.getByRole('heading', { name: 'Your team has no book yet' }).waitFor();
      await page.getByText('Creating one needs the member role or higher.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create your first book' }).count(), 0);
      await screen(page, 'campaigns-no-book-viewer');
      await page.done();

      // Once the team has a book, the same address opens that book's section.
      const book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Later' } })).data.id;
      const again = await env.page(t);
      await login(again, viewer, '/app/campaigns');
      await again.waitForURL(`**/app/books/${book}/campaigns`);
      await again.getByRole('heading', { name: 'Campaigns of Later' }).waitFor();
      await again.done();
    });
  });
