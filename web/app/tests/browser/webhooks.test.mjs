// Webhooks (admins): create with an event picker (the secret shown once),
// the delivery log of real deliveries to a local receiver, filtered by
// outcome, with payload and response; edit, disable, delete; what others see.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Webhooks', { concurrency: 1 }, () => {
    let env, owner, admin, member, book, receiver, url;
    const received = [];
    let secret = '';
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      admin = await env.member(owner, 'admin', 'Adele');
      member = await env.member(owner, 'member', 'Mick');
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Hooked' } })).data.id;
      // The receiver refuses the events about contacts named Fail.
      receiver = createServer((req, res) => {
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          received.push({ body, signature: req.headers['x-service-signature'] });
          const fail = JSON.parse(body).data?.first_name === 'Fail';
          res.writeHead(fail ? 500 : 200, { 'Content-Type': 'text/plain' }).end(fail ? 'receiver broke' : 'thanks');
        });
      });
      await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${receiver.address().port}/hook`;
    });
    after(() => new Promise((r) => receiver.close(r)));
    const hooks = () => env.db(`SELECT coalesce(string_agg(url || ' ' || array_to_string(events, ',') || ' ' || active, ';'), '') FROM webhooks WHERE team_id = '${owner.teamId}'`);

    test('an admin creates a webhook and sees its secret once', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/team');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      await page.getByRole('button', { name: 'New webhook' }).click();
      const d = page.getByRole('dialog', { name: 'New webhook' });
      await d.getByRole('button', { name: 'Create webhook' }).click();
      await d.getByText('Choose at least one event.').waitFor();
      await d.getByLabel('URL').fill(url);
      await d.getByLabel(/^contact\.created:/).check();
      await screen(page, 'webhook-new');
      await d.getByRole('button', { name: 'Create webhook' }).click();
      const shown = page.getByRole('dialog', { name: "The webhook's signing secret" });
      secret = await shown.getByLabel('Signing secret').inputValue();
      assert.match(secret, /^whsec_/);
      await shown.getByRole('button', { name: 'Done' }).click();
      assert.equal(hooks(), `${url} contact.created true`);
      await page.reload();
      await page.getByRole('cell', { name: url, exact: true }).waitFor();
      assert.equal(await page.getByText(secret).count(), 0, 'the secret is not shown again');
      await page.done();
    });

    test('the delivery log shows real deliveries, filtered by outcome', async (t) => {
      for (const name of ['Good', 'Fail']) {
        await env.api('POST', '/api/contacts', { token: owner.token, book, body: { first_name: name, last_name: 'Hook' } });
      }
      for (let i = 0; received.length < 2; i++) {
        assert.ok(i < 200, 'the receiver got both events');
        await new Promise((r) => setTimeout(r, 50));
      }
      for (const r of received) {
        assert.equal(r.signature, createHmac('sha256', secret).update(r.body).digest('hex'), 'signed with the secret shown');
      }
      const page = await env.page(t);
      await login(page, admin, '/app/webhooks');
      await page.getByRole('button', { name: `Delivery log of ${url}` }).click();
      const log = page.getByRole('table', { name: `Delivery attempts to ${url}, newest first` });
      await log.getByRole('cell', { name: 'Failed' }).waitFor();
      await log.getByRole('cell', { name: 'Succeeded' }).waitFor();
      // The filtered answer replaces the list: only that outcome is left.
      const only = async (kept, gone) => {
        for (let i = 0; (await log.getByRole('cell', { name: gone, exact: true }).count()) !== 0; i++) {
          assert.ok(i < 100, `the filter leaves only ${kept}`);
          await page.waitForTimeout(50);
        }
        await log.getByRole('cell', { name: kept, exact: true }).first().waitFor();
      };
      await page.getByLabel('Outcome').selectOption('false');
      await only('Failed', 'Succeeded');
      await log.getByRole('cell', { name: '500' }).first().waitFor();
      await log.getByRole('button', { name: /^Show the payload and response of the contact\.created attempt/ }).first().click();
      const detail = page.getByRole('dialog', { name: /^contact\.created at/ });
      assert.match(await detail.getByLabel('Payload sent').textContent(), /"first_name": "Fail"/);
      assert.equal(await detail.getByLabel('Response').textContent(), 'receiver broke');
      await screen(page, 'webhook-delivery');
      await detail.getByRole('button', { name: 'Close' }).click();
      await page.getByLabel('Outcome').selectOption('true');
      await only('Succeeded', 'Failed');
      await log.getByRole('cell', { name: '200' }).waitFor();
      await screen(page, 'webhooks');
      await page.done();
    });

    test('an admin edits, disables and deletes the webhook', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/webhooks');
      await page.getByRole('button', { name: `Edit ${url}` }).click();
      const d = page.getByRole('dialog', { name: `Edit the webhook to ${url}` });
      await d.getByLabel(/^contact\.deleted:/).check();
      await d.getByRole('button', { name: 'Save webhook' }).click();
      await page.getByText(`The webhook to ${url} is saved.`).waitFor();
      assert.equal(hooks(), `${url} contact.created,contact.deleted true`);
      await page.getByRole('button', { name: `Disable ${url}` }).click();
      await page.getByRole('button', { name: `Enable ${url}` }).waitFor();
      assert.equal(hooks(), `${url} contact.created,contact.deleted false`);
      await page.getByRole('button', { name: `Delete ${url}` }).click();
      await page.getByRole('dialog', { name: `Delete the webhook to ${url}?` }).getByRole('button', { name: 'Delete webhook' }).click();
      await page.getByText('No webhook yet.').waitFor();
      assert.equal(hooks(), '');
      await page.done();
    });

    test('a member has no Webhooks link and is told why on the screen', async (t) => {
      const page = await env.page(t);
      await login(page, member, '/app/team');
      assert.equal(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).count(), 0);
      await page.goto('/app/webhooks');
      await page.getByText('Needs the admin role or higher.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'New webhook' }).count(), 0);
      await screen(page, 'webhooks-member');
      await page.done();
    });
  });
