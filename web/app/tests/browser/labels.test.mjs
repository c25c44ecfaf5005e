// Labels (create, rename, colour, reorder by keyboard and by drag, delete)
// and custom field definitions of a book.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Labels and custom fields', { concurrency: 1 }, () => {
    let env, owner, book;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Tagged' } })).data.id;
    });

    const order = () => env.db(`SELECT string_agg(name, ',' ORDER BY sort_order) FROM labels WHERE book_id = '${book}'`);

    test('labels: create, rename, reorder by keyboard and by drag, delete', async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/labels`);
      await page.getByRole('heading', { name: 'Labels and fields of Tagged' }).waitFor();
      for (const name of ['Alpha', 'Beta', 'Gamma']) {
        await page.getByRole('button', { name: 'New label' }).click();
        const d = page.getByRole('dialog', { name: 'New label' });
        await d.getByLabel('Name').fill(name);
        await d.getByRole('button', { name: 'Create label' }).click();
        await page.getByText(`Label “${name}” saved.`).waitFor();
      }
      assert.equal(order(), 'Alpha,Beta,Gamma');
      await screen(page, 'labels');

      // Keyboard: the Move buttons are ordinary buttons.
      await page.getByRole('button', { name: 'Move up Gamma' }).focus();
      await page.keyboard.press('Enter');
      await page.getByText('“Gamma” moved to position 2 of 3.').waitFor();
      assert.equal(order(), 'Alpha,Gamma,Beta');

      // Drag Beta onto Alpha.
      await page.locator('.draggable', { hasText: 'Beta' }).dragTo(page.locator('.draggable', { hasText: 'Alpha' }));
      await page.getByText('“Beta” moved to position 1 of 3.').waitFor();
      assert.equal(order(), 'Beta,Alpha,Gamma');

      await page.getByRole('button', { name: 'Edit Alpha' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit label Alpha' });
      await edit.getByLabel('Name').fill('Prime');
      await edit.getByRole('button', { name: 'Save label' }).click();
      await page.getByText('Label “Prime” saved.').waitFor();

      await page.getByRole('button', { name: 'Delete Gamma' }).click();
      await page.getByRole('dialog', { name: 'Delete the label “Gamma”?' }).getByRole('button', { name: 'Delete label' }).click();
      await page.getByText('The label “Gamma” was deleted.').waitFor();
      assert.equal(order(), 'Beta,Prime');
      await page.done();
    });

    test('custom fields: create with a suggested key, refuse a bad key at the field, delete', async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/labels`);
      await page.getByRole('button', { name: 'New field' }).click();
      const d = page.getByRole('dialog', { name: 'New custom field' });
      await d.getByLabel('Name').fill('Customer tier');
      assert.equal(await d.getByLabel('Key').inputValue(), 'customer_tier');
      await d.getByLabel('Key').fill('9lives');
      await d.getByRole('button', { name: 'Create field' }).click();
      assert.equal(await d.getByLabel('Key').getAttribute('aria-invalid'), 'true');
      await screen(page, 'field-dialog-error');
      await d.getByLabel('Key').fill('tier');
      await d.getByLabel('Type').selectOption('number');
      await d.getByRole('button', { name: 'Create field' }).click();
      await page.getByText('Field “Customer tier” created.').waitFor();
      assert.equal(env.db(`SELECT key || ' ' || type FROM field_definitions WHERE book_id = '${book}'`), 'tier number');
      await page.getByRole('row', { name: /Customer tier/ }).getByText('Number').waitFor();
      await screen(page, 'labels-and-fields');

      await page.getByRole('button', { name: 'Delete Customer tier' }).click();
      await page.getByRole('dialog', { name: 'Delete the field “Customer tier”?' }).getByRole('button', { name: 'Delete field' }).click();
      await page.getByText('No custom fields yet.').waitFor();
      await page.done();
    });

    test("a book's labels answering after a switch to another book do not show there", async (t) => {
      const slow = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Slow' } })).data.id;
      const quick = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Quick' } })).data.id;
      await env.api('POST', `/api/books/${slow}/labels`, { token: owner.token, body: { name: 'SlowOnly' } });
      await env.api('POST', `/api/books/${quick}/labels`, { token: owner.token, body: { name: 'QuickOnly' } });
      const page = await env.page(t);
      await login(page, owner, '/app/books');
      await page.route(`**/api/books/${slow}/labels`, async (r) => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await r.continue();
      });
      const lateAnswer = page.waitForResponse((r) => r.url().endsWith(`/api/books/${slow}/labels`));
      await page.goto(`/app/books/${slow}/labels`);
      await page.getByRole('heading', { name: 'Labels and fields of Slow' }).waitFor();
      await page.getByRole('combobox', { name: 'Book' }).selectOption({ label: 'Quick' });
      await page.getByText('QuickOnly').first().waitFor();
      await (await lateAnswer).finished();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      assert.equal(await page.getByText('SlowOnly').count(), 0);
      await page.getByText('QuickOnly').first().waitFor({ timeout: 1000 });
      await page.done();
    });

    test('a viewer sees labels and fields without write controls', async (t) => {
      const viewer = await env.member(owner, 'viewer');
      const page = await env.page(t);
      await login(page, viewer, `/app/books/${book}/labels`);
      await page.getByRole('heading', { name: 'Labels and fields of Tagged' }).waitFor();
      await page.getByText('Prime').waitFor();
      for (const name of ['New label', 'New field', 'Edit Prime', 'Delete Prime', 'Move up Prime']) {
        assert.equal(await page.getByRole('button', { name }).count(), 0, name);
      }
      await screen(page, 'labels-viewer');
      await page.done();
    });
  });
