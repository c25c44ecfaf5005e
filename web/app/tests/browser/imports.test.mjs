// Imports and exports: the wizard (the detected columns over the first
// rows, a column sent elsewhere, a dry run, the row errors), a 10,000-row
// CSV with its progress bar moving, past imports, a vCard, exports of the
// book and of the contacts table's filter, and what a viewer may do.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Imports and exports', { concurrency: 1 }, () => {
    let env, owner, member, viewer, book;
    const count = () => Number(env.db(`SELECT count(*) FROM contacts WHERE book_id = '${book}'`));
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      member = await env.member(owner, 'member', 'Mick');
      viewer = await env.member(owner, 'viewer', 'Vera');
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Imported' } })).data.id;
    });

    test('the wizard: detected columns, a column sent elsewhere, a dry run, then the import and its row errors', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/contacts`);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Imports' }).click();
      await page.getByRole('heading', { name: 'Imports and exports of Imported' }).waitFor();
      const csv = 'Name,E-mail,Team\r\nAnn Lee,ann@example.com,Blue\r\nBob Ray,bob@example.com,Red\r\n,not-an-address,\r\n';
      await page.getByLabel('File (CSV or vCard)').setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      const table = page.getByRole('table', { name: 'Where each column goes, over the first rows' });
      await table.getByRole('cell', { name: 'Ann Lee' }).waitFor();
      assert.equal(await page.getByLabel('Field for Name').inputValue(), 'full_name');
      assert.equal(await page.getByLabel('Field for E-mail').inputValue(), 'emails.other');
      assert.equal(await page.getByLabel('Field for Team').inputValue(), 'ignore');
      await page.getByText('3 rows in a CSV file.').waitFor();
      await page.getByLabel('Field for Team').selectOption('company');
      await page.getByLabel('When an address is already in the book').selectOption('update');
      await screen(page, 'import-preview');

      await page.getByLabel('Dry run: write nothing, report what would happen').check();
      await page.getByRole('button', { name: 'Start the dry run' }).click();
      await page.getByRole('status').filter({ hasText: 'Would have: 2 created, 0 updated, 0 skipped, 1 failed.' }).waitFor();
      assert.equal(count(), 0, 'a dry run writes nothing');

      await page.getByLabel('Dry run: write nothing, report what would happen').uncheck();
      await page.getByRole('button', { name: 'Start import' }).click();
      await page.getByRole('status').filter({ hasText: /^2 created, 0 updated, 0 skipped, 1 failed\.$/ }).waitFor();
      const errors = page.getByRole('table', { name: 'Rows that failed' });
      await errors.getByRole('cell', { name: '4', exact: true }).waitFor();
      assert.equal(count(), 2);
      assert.equal(env.db(`SELECT company FROM contacts WHERE book_id = '${book}' AND first_name = 'Ann'`), 'Blue', 'the column sent elsewhere took effect');
      await screen(page, 'import-done');
      await page.getByRole('table', { name: 'Past imports, newest first' }).getByRole('cell', { name: 'CSV, dry run' }).waitFor();
      await page.done();
    });

    test('10,000 rows with the progress bar moving', async (t) => {
      const lines = ['First Name,Last Name,E-mail Address'];
      for (let i = 1; i <= 10000; i++) lines.push(`Bulk,Person${i},bulk${i}@example.com`);
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/imports`);
      await page.getByLabel('File (CSV or vCard)').setInputFiles({ name: 'big.csv', mimeType: 'text/csv', buffer: Buffer.from(lines.join('\r\n') + '\r\n') });
      await page.getByText('10,000 rows in a CSV file.').waitFor();
      // Every value the bar shows, as the page shows it.
      await page.evaluate(() => {
        window.seen = [];
        const look = () => {
          const p = document.querySelector('progress');
          if (p && window.seen.at(-1) !== p.value) window.seen.push(p.value);
        };
        window.looking = setInterval(look, 10);
      });
      await page.getByRole('button', { name: 'Start import' }).click();
      await page.getByRole('status').filter({ hasText: /^10000 created, 0 updated, 0 skipped, 0 failed\.$/ }).waitFor({ timeout: 60000 });
      const seen = await page.evaluate(() => (clearInterval(window.looking), window.seen));
      console.log(`import progress values seen: ${seen.join(', ')}`);
      assert.equal(seen.at(-1), 10000);
      assert.ok(seen.length >= 2 && seen[0] < 10000, `the bar moved: ${seen.join(', ')}`);
      assert.equal(count(), 10002);
      await page.done();
    });

    test('a vCard, the exports, and a viewer', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/imports`);
      const vcf = 'BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Cy Vee\r\nN:Vee;Cy;;;\r\nEMAIL:cy@example.com\r\nEND:VCARD\r\n';
      await page.getByLabel('File (CSV or vCard)').setInputFiles({ name: 'cy.vcf', mimeType: 'text/vcard', buffer: Buffer.from(vcf) });
      await page.getByText('1 contact in a vCard file.').waitFor();
      await page.getByText('Cy Vee · cy@example.com').waitFor();
      await page.getByRole('button', { name: 'Start import' }).click();
      await page.getByRole('status').filter({ hasText: /^1 created/ }).waitFor();

      // The contacts table exports what its filter shows.
      await page.goto(`/app/books/${book}/contacts?q=ann`);
      const download = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Export these contacts' }).click();
      const rows = readFileSync(await (await download).path(), 'utf8').trim().split(/\r?\n/);
      assert.equal(rows.length, 2, 'the header and Ann');
      assert.match(rows[1], /ann@example\.com/);
      await page.goto(`/app/books/${book}/imports`);
      const vcard = page.waitForEvent('download');
      await page.getByRole('link', { name: 'vCard', exact: true }).click();
      assert.equal((readFileSync(await (await vcard).path(), 'utf8').match(/BEGIN:VCARD/g) ?? []).length, 10003);
      await page.done();

      // Exports take the whole book away: members and above only.
      const v = await env.page(t);
      await login(v, viewer, `/app/books/${book}/imports`);
      await v.getByText('Importing: Needs the member role or higher.').waitFor();
      await v.getByText('Exporting: Needs the member role or higher.').waitFor();
      assert.equal(await v.getByLabel('File (CSV or vCard)').count(), 0);
      assert.equal(await v.getByRole('link', { name: 'vCard', exact: true }).count(), 0);
      await screen(v, 'imports-viewer');
      await v.goto(`/app/books/${book}/contacts`);
      await v.getByRole('table').waitFor();
      assert.equal(await v.getByRole('link', { name: 'Export' }).count(), 0, 'no export on the contacts table');
      await v.done();
    });

    test('a file over 50 MB shows the limit and is not sent', async (t) => {
      // A file on disk: the browser protocol takes at most 50 MB inline.
      const dir = mkdtempSync(join(tmpdir(), 'contactbook-upload-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'huge.csv');
      const line = Buffer.from('Big,Person,big@example.com\r\n');
      writeFileSync(file, Buffer.concat([Buffer.from('First Name,Last Name,E-mail Address\r\n'), Buffer.alloc(60 << 20, line)]));
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/imports`);
      const sent = [];
      page.on('request', (r) => r.method() === 'POST' && sent.push(r.url()));
      await page.getByLabel('File (CSV or vCard)').setInputFiles(file);
      await page.getByRole('alert').filter({ hasText: 'The file is larger than 50 MB; split it into several imports.' }).waitFor();
      assert.deepEqual(sent, [], 'nothing uploaded');
      assert.equal(await page.getByRole('button', { name: 'Start import' }).count(), 0);
      await page.done();
    });
  });
