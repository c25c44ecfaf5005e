// The contacts table: paging, search, filters, sort and columns kept in the
// URL; bulk actions on a 1,000-contact book; what each role sees.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, seedContacts, start } from './harness.mjs';

/**
 * watchProgress records, frame by frame, what the page's progress bar
 * (role progressbar, named "Progress") shows while a bulk change runs.
 */
async function watchProgress(page) {
  await page.evaluate(() => {
    const seen = (window.progressSeen = []);
    const look = () => {
      const bar = document.querySelector('progress');
      if (bar && seen.at(-1) !== bar.value) seen.push(bar.value);
      window.progressWatch = requestAnimationFrame(look);
    };
    look();
  });
}

/** assertProgressed checks the bar moved in steps towards total, not from nothing to done. */
async function assertProgressed(page, total) {
  const seen = await page.evaluate(() => {
    cancelAnimationFrame(window.progressWatch);
    return window.progressSeen;
  });
  const between = seen.filter((v) => v > 0 && v < total);
  assert.ok(between.length >= 2, `the progress bar showed steps between 0 and ${total}: ${seen.join(', ')}`);
  assert.deepEqual([...between].sort((a, b) => a - b), between, 'progress only moves forward');
}

export default () =>
  describe('Contacts table', { concurrency: 1 }, () => {
    let env, owner, book, vip, lead, tier;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Big book' } })).data.id;
      const path = `/api/books/${book}`;
      vip = (await env.api('POST', `${path}/labels`, { token: owner.token, body: { name: 'VIP', color: '#B91C1C' } })).data;
      lead = (await env.api('POST', `${path}/labels`, { token: owner.token, body: { name: 'Lead', color: '#166534' } })).data;
      tier = (await env.api('POST', `${path}/fields`, { token: owner.token, body: { key: 'tier', name: 'Tier', type: 'text' } })).data;
      seedContacts(env, book, 1000);
    });

    const rows = (page) => page.getByRole('table').locator('tbody tr');

    test('paging, search, filters, sort and columns live in the URL and survive a reload', async (t) => {
      env.db(`UPDATE contacts SET starred = true WHERE last_name IN ('000007', '000008')`);
      await env.api('POST', '/api/contacts/bulk-add-label', { token: owner.token, book, body: { contact_ids: [env.db(`SELECT id FROM contacts WHERE last_name = '000008'`)], label_id: lead.id } });
      const page = await env.page(t);
      await login(page, owner);
      await page.getByRole('heading', { name: 'Big book' }).waitFor();
      await page.getByText('1,000 contacts').waitFor();
      assert.equal(await rows(page).count(), 50);
      await screen(page, 'contacts');

      // Each row links the contact's name to its page.
      const first = page.getByRole('table').getByRole('link').first();
      assert.match(await first.getAttribute('href'), /^\/app\/contacts\/[0-9a-f-]{36}$/);

      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2 of 20').waitFor();
      await page.getByLabel('Rows per page').selectOption('100');
      await page.getByText('Page 1 of 10').waitFor();
      await rows(page).nth(99).waitFor();

      // Sort by name, descending.
      await page.getByRole('button', { name: 'Name' }).click();
      await page.getByRole('button', { name: 'Name' }).click();
      assert.equal(await page.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort'), 'descending');
      await page.getByRole('link', { name: 'Person 001000' }).waitFor();

      // Typing in the search box answers with the matches; the URL follows.
      await page.getByLabel('Search contacts').fill('00000');
      await page.getByText('9 matching contacts').waitFor();
      assert.match(page.url(), /q=00000/);

      // Columns: add the custom field and the phone, drop the company.
      await page.getByRole('button', { name: 'Columns' }).click();
      const picker = page.getByRole('dialog', { name: 'Columns' });
      await picker.getByLabel('Tier').check();
      await picker.getByLabel('Company').uncheck();
      await screen(page, 'contacts-columns');
      await picker.getByRole('button', { name: 'Show these columns' }).click();
      await page.getByRole('columnheader', { name: 'Tier' }).waitFor();

      const before = page.url();
      await page.reload();
      await page.getByText('9 matching contacts').waitFor();
      assert.equal(page.url(), before);
      assert.equal(await page.getByLabel('Search contacts').inputValue(), '00000');
      assert.equal(await page.getByLabel('Rows per page').inputValue(), '100');
      assert.equal(await page.getByRole('columnheader', { name: 'Company' }).count(), 0);
      await page.getByRole('columnheader', { name: 'Tier' }).waitFor();
      assert.equal(await page.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort'), 'descending');

      // Starred and label filters narrow further.
      await page.getByLabel('Starred').selectOption('true');
      await page.getByText('2 matching contacts').waitFor();
      await page.getByLabel('Label', { exact: true }).selectOption({ label: 'Lead' });
      await page.getByText('1 matching contact', { exact: true }).waitFor();
      await page.getByRole('link', { name: 'Person 000008' }).waitFor();
      await page.reload();
      await page.getByText('1 matching contact', { exact: true }).waitFor();

      // No match: the empty state offers to clear the filters.
      await page.getByLabel('Search contacts').fill('nobody-by-this-name');
      await page.getByText('No contacts match.').waitFor();
      await screen(page, 'contacts-no-match');
      await page.getByRole('button', { name: 'Clear the filters' }).click();
      await page.getByText('1,000 contacts').waitFor();

      // A link past the last page shows the last page; a book of nobody's shows why it is empty.
      await page.goto(`/app/books/${book}/contacts?page=999`);
      await page.getByText('Page 20 of 20').waitFor();
      await rows(page).nth(49).waitFor();
      assert.match(page.url(), /page=20/);
      await page.goto('/app/books/00000000-0000-4000-8000-000000000000/contacts');
      await page.getByText('This book does not exist or belongs to another team.').waitFor();
      await page.done();
    });

    test('bulk actions on all 1,000 contacts, each with a count confirmation', async (t) => {
      const page = await env.page(t);
      await login(page, owner);
      await page.getByText('1,000 contacts').waitFor();
      await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
      await page.getByText('50 contacts selected').waitFor();
      await page.getByRole('button', { name: 'Select all 1,000 matching contacts' }).click();
      await page.getByText('1,000 contacts selected').waitFor();
      await screen(page, 'contacts-selected');

      await page.getByRole('button', { name: 'Add label' }).click();
      let dialog = page.getByRole('dialog', { name: 'Add a label' });
      await dialog.getByLabel('Label').selectOption({ label: 'VIP' });
      await screen(page, 'contacts-bulk-label');
      await watchProgress(page);
      await dialog.getByRole('button', { name: 'Add label to 1,000 contacts' }).click();
      await page.getByText('Label “VIP” added to 1,000 contacts.').waitFor();
      await assertProgressed(page, 1000);
      assert.equal(env.db(`SELECT count(*) FROM contact_labels WHERE label_id = '${vip.id}'`), '1000');

      await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
      await page.getByRole('button', { name: 'Select all 1,000 matching contacts' }).click();
      await page.getByText('1,000 contacts selected').waitFor();
      await page.getByRole('button', { name: 'Set field' }).click();
      dialog = page.getByRole('dialog', { name: 'Set a custom field' });
      await dialog.getByLabel('Value').fill('gold');
      await dialog.getByRole('button', { name: 'Set field on 1,000 contacts' }).click();
      await page.getByText('“Tier” set on 1,000 contacts.').waitFor();
      assert.equal(env.db(`SELECT count(*) FROM contact_field_values WHERE field_id = '${tier.id}' AND value = 'gold'`), '1000');

      // Remove the label from the starred ones only.
      await page.getByLabel('Starred').selectOption('true');
      await page.getByText('2 matching contacts').waitFor();
      await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
      await page.getByRole('button', { name: 'Remove label' }).click();
      dialog = page.getByRole('dialog', { name: 'Remove a label' });
      await dialog.getByLabel('Label').selectOption({ label: 'VIP' });
      await dialog.getByRole('button', { name: 'Remove label from 2 contacts' }).click();
      await page.getByText('Label “VIP” removed from 2 contacts.').waitFor();
      assert.equal(env.db(`SELECT count(*) FROM contact_labels WHERE label_id = '${vip.id}'`), '998');

      await page.getByLabel('Starred').selectOption('');
      await page.getByText('1,000 contacts').waitFor();
      await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
      await page.getByRole('button', { name: 'Select all 1,000 matching contacts' }).click();
      await page.getByText('1,000 contacts selected').waitFor();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      dialog = page.getByRole('dialog', { name: 'Delete 1,000 contacts?' });
      await screen(page, 'contacts-bulk-delete');
      await watchProgress(page);
      await dialog.getByRole('button', { name: 'Delete 1,000 contacts' }).click();
      await page.getByText('1,000 contacts deleted.').waitFor();
      await assertProgressed(page, 1000);
      assert.equal(env.db(`SELECT count(*) FROM contacts WHERE book_id = '${book}'`), '0');
      await page.getByText('This book has no contacts yet.').waitFor();
      await screen(page, 'contacts-empty');
      await page.done();
    });

    test('a viewer sees the table without any write control; a member can select and star', async (t) => {
      seedContacts(env, book, 5, 'Viewer');
      const viewer = await env.member(owner, 'viewer');
      const page = await env.page(t);
      await login(page, viewer);
      await page.getByText('5 contacts').waitFor();
      assert.equal(await page.getByRole('button', { name: 'New contact' }).count(), 0);
      assert.equal(await page.getByRole('checkbox').count(), 0);
      assert.equal(await page.getByRole('button', { name: /^Star / }).count(), 0);
      await screen(page, 'contacts-viewer');
      await page.done();

      const member = await env.member(owner, 'member');
      const mpage = await env.page(t);
      await login(mpage, member);
      await mpage.getByText('5 contacts').waitFor();
      await mpage.getByRole('button', { name: 'New contact' }).waitFor();
      await mpage.getByRole('button', { name: 'Star Viewer 000001' }).click();
      await mpage.getByRole('button', { name: 'Star Viewer 000001', pressed: true }).waitFor();
      assert.equal(env.db(`SELECT starred FROM contacts WHERE first_name = 'Viewer' AND last_name = '000001'`), 't');
      await mpage.done();
    });

    test('the keyboard alone sorts, selects, and opens and leaves a bulk dialog', async (t) => {
      const page = await env.page(t);
      await login(page, owner);
      await page.getByText('5 contacts').waitFor();
      await page.getByLabel('Search contacts').focus();
      // Tab (or Shift+Tab) until the focused element's accessible name is name.
      const focused = () => page.evaluate(() => (document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent ?? '').trim());
      const tabTo = async (name, key = 'Tab') => {
        for (let i = 0; i < 60 && (await focused()) !== name; i++) await page.keyboard.press(key);
        assert.equal(await focused(), name, `${key} reaches ${name}`);
      };
      await tabTo('Name');
      await page.keyboard.press('Enter');
      await page.getByRole('columnheader', { name: 'Name', exact: true }).and(page.locator('[aria-sort="ascending"]')).waitFor();
      await tabTo('Select Viewer 000002');
      await page.keyboard.press('Space');
      await page.getByText('1 contact selected').waitFor();
      await tabTo('Add label', 'Shift+Tab');
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Add a label' });
      await dialog.waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.closest('dialog') !== null), true, 'focus is in the dialog');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await page.waitForFunction(() => document.activeElement?.textContent?.trim() === 'Add label', null, { timeout: 2000 });
      await page.done();
    });
  });
