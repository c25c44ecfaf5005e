// Deliverability (figures, the daily complaint chart with its 0.1 % and
// 0.3 % lines, the window) and the suppression list (search, reason filter,
// add, lift, export) of a book, for each role.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Deliverability and suppressions', { concurrency: 1 }, () => {
    let env, owner, admin, member, viewer, book;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      [admin, member, viewer] = [await env.member(owner, 'admin'), await env.member(owner, 'member'), await env.member(owner, 'viewer')];
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Mailing' } })).data.id;
      // Two days of campaign email: today 1,000 sent with 4 spam reports
      // (0.4 %, over the blocking line), five days ago 2,000 with 1 (0.05 %).
      env.db(`INSERT INTO delivery_daily_counts (book_id, day, sent, delivered, bounced, complained, unsubscribed, opened, clicked) VALUES
        ('${book}', (now() AT TIME ZONE 'UTC')::date, 1000, 980, 20, 4, 3, 400, 90),
        ('${book}', (now() AT TIME ZONE 'UTC')::date - 5, 2000, 1990, 10, 1, 2, 700, 100),
        ('${book}', (now() AT TIME ZONE 'UTC')::date - 60, 500, 500, 0, 0, 0, 100, 10)`);
      env.db(`INSERT INTO suppressions (book_id, email, reason, source, created_at)
        SELECT '${book}', 'bounced' || g || '@example.com', 'bounce', 'provider', now() - g * interval '1 minute' FROM generate_series(1, 25) g`);
      env.db(`INSERT INTO suppressions (book_id, email, reason, source, created_at) VALUES ('${book}', 'angry@example.com', 'complaint', 'provider', now())`);
    });

    test('deliverability: figures over the window, the chart and its complaint lines', async (t) => {
      const page = await env.page(t);
      await login(page, viewer, `/app/books/${book}/suppressions`);
      await page.getByRole('heading', { name: 'Deliverability and suppressions of Mailing' }).waitFor();
      const figure = (name) => page.locator('.figures div', { has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) }).locator('dd');
      await figure('Sent').getByText('3,000').waitFor();
      assert.equal(await figure('Spam complaints').textContent(), '5 (0.17 %)');
      assert.match(await page.locator('.verdict').textContent(), /above the 0\.1 %/);
      // The chart: one bar a day with email, both lines, a text alternative.
      const chart = page.getByRole('img', { name: /Daily spam-complaint rate over 30 days; the highest, 0\.40 %/ });
      await chart.waitFor();
      assert.equal(await page.locator('.chart rect.bar').count(), 2);
      assert.equal(await page.locator('.chart rect.bar.bad').count(), 1);
      assert.deepEqual(await page.locator('.chart .threshold').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-rate'))), ['0.001', '0.003']);
      await screen(page, 'deliverability');
      // A wider window takes in the older day.
      await page.getByLabel('Window').selectOption('90');
      await figure('Sent').getByText('3,500').waitFor();
      assert.equal(await page.locator('.chart rect.bar').count(), 3);
      // Nobody but members adds, and only admins lift.
      assert.equal(await page.getByRole('button', { name: 'Add suppression' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: /^Lift the suppression/ }).count(), 0);
      await page.done();
    });

    test('suppressions: search, filter by reason, page, export what the filter shows', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/suppressions`);
      const table = page.getByRole('table', { name: 'Suppressed addresses' });
      await table.getByRole('cell', { name: 'bounced1@example.com' }).waitFor();
      assert.equal(await table.locator('tbody tr').count(), 20);
      // The page on screen stays while the next one loads, so each step
      // waits for the rows it expects rather than for any matching cell.
      const rowsAre = (n) =>
        page.waitForFunction((n) => [...document.querySelectorAll('table')].find((t) => t.caption?.textContent === 'Suppressed addresses')?.tBodies[0]?.rows.length === n, n, { timeout: 5000 });
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2 of 2').waitFor();
      await table.getByRole('cell', { name: 'bounced25@example.com' }).waitFor();
      await rowsAre(6);
      await page.getByLabel('Reason').selectOption('complaint');
      await rowsAre(1);
      await table.getByRole('cell', { name: 'angry@example.com' }).waitFor();
      await page.getByLabel('Reason').selectOption('');
      await page.getByLabel('Search suppressions').fill('bounced2');
      await rowsAre(7); // bounced2 and bounced20-25
      await table.getByRole('cell', { name: 'bounced25@example.com' }).waitFor();
      const download = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Export CSV' }).click();
      const file = await (await download).path();
      const csv = (await import('node:fs')).readFileSync(file, 'utf8').trim().split('\n');
      assert.equal(csv[0], 'email,reason,source,created_at');
      assert.deepEqual(csv.slice(1).map((l) => l.split(',')[0]).sort(), ['bounced2', 'bounced20', 'bounced21', 'bounced22', 'bounced23', 'bounced24', 'bounced25'].map((e) => e + '@example.com').sort());
      // A member adds by hand but may not lift.
      await page.getByRole('button', { name: 'Add suppression' }).click();
      const d = page.getByRole('dialog', { name: 'Add a suppression' });
      await d.getByRole('button', { name: 'Add suppression' }).click();
      await d.getByText('Enter an email address.').waitFor();
      await d.getByLabel('Email').fill('Hand@Example.com');
      await d.getByRole('button', { name: 'Add suppression' }).click();
      await page.getByText('hand@example.com is suppressed.').waitFor();
      assert.equal(env.db(`SELECT reason || '/' || source FROM suppressions WHERE book_id = '${book}' AND email = 'hand@example.com'`), 'manual/api');
      assert.equal(await page.getByRole('button', { name: /^Lift the suppression/ }).count(), 0);
      await screen(page, 'suppressions');
      await page.done();
    });

    test('suppressions: an admin lifts one and the record stays', async (t) => {
      const page = await env.page(t);
      await login(page, admin, `/app/books/${book}/suppressions`);
      await page.getByLabel('Search suppressions').fill('angry');
      await page.getByRole('button', { name: 'Lift the suppression of angry@example.com' }).click();
      await page.getByRole('dialog', { name: 'Lift the suppression of angry@example.com?' }).getByRole('button', { name: 'Lift suppression' }).click();
      await page.getByText('angry@example.com can receive campaign email again.').waitFor();
      await page.getByText('No suppression matches.').waitFor();
      assert.equal(env.db(`SELECT count(*) FROM suppressions WHERE email = 'angry@example.com' AND lifted_at IS NOT NULL AND lifted_by = '${admin.userId}'`), '1');
      await page.done();
    });

    test('the Suppressions link of the navigation opens the screen of the current book', async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/contacts`);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Suppressions' }).click();
      await page.getByRole('heading', { name: 'Deliverability and suppressions of Mailing' }).waitFor();
      await page.done();
    });
  });
