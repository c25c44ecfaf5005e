// Webhooks (admins): create with an event picker (the secret shown once),
// the delivery log of real deliveries to a local receiver, filtered by
// outcome, with payload and response; a test send, a retry and a recovery;
// the rate limit in the form; a webhook the service switched off, enabled
// again; edit, disable (a disabled webhook's failed events recovered and
// kept), delete; what others see.
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
          received.push({ body, signature: req.headers['x-service-signature'], delivery: req.headers['x-service-delivery'] });
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
      // The failing receiver's delivery may have been retried by now:
      // one failed attempt or more.
      await log.getByRole('cell', { name: 'Failed' }).first().waitFor();
      await log.getByRole('cell', { name: 'Succeeded' }).first().waitFor();
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
      await log.getByRole('cell', { name: '200' }).first().waitFor();
      await screen(page, 'webhooks');
      await page.done();
    });

    // Waits until the receiver holds n requests.
    const receivedAtLeast = async (n, what) => {
      for (let i = 0; received.length < n; i++) {
        assert.ok(i < 300, what);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    test('an admin sends a test event and retries a failed delivery', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/webhooks');
      const before = received.length;
      await page.getByRole('button', { name: `Send test to ${url}` }).click();
      await page.getByText(`A test event is on its way to ${url}; its attempt shows in the delivery log.`).waitFor();
      // (An automatic retry of the failed delivery may arrive meanwhile.)
      const isTest = (r) => JSON.parse(r.body).event === 'webhook.test';
      for (let i = 0; !received.slice(before).some(isTest); i++) {
        assert.ok(i < 300, 'the receiver got the test event');
        await new Promise((r) => setTimeout(r, 50));
      }
      const test = JSON.parse(received.slice(before).find(isTest).body);
      assert.equal(test.data.webhook_id, env.db(`SELECT id FROM webhooks WHERE url = '${url}'`));
      const log = page.getByRole('table', { name: `Delivery attempts to ${url}, newest first` });
      for (let i = 0; (await log.getByRole('cell', { name: 'webhook.test', exact: true }).count()) === 0; i++) {
        assert.ok(i < 50, 'the test attempt shows in the log');
        await page.getByRole('button', { name: 'Refresh' }).click();
        await page.waitForTimeout(100);
      }
      await log.getByRole('cell', { name: 'By an admin' }).first().waitFor();
      await page.getByLabel('Event', { exact: true }).selectOption('webhook.test');
      for (let i = 0; (await log.getByRole('cell', { name: 'contact.created', exact: true }).count()) !== 0; i++) {
        assert.ok(i < 100, 'the event filter leaves only the test');
        await page.waitForTimeout(50);
      }

      // The failed delivery goes again, byte for byte, with the same delivery id.
      await page.getByLabel('Event', { exact: true }).selectOption('contact.created');
      await page.getByLabel('Outcome').selectOption('false');
      const failed = received.find((r) => JSON.parse(r.body).data?.first_name === 'Fail');
      const sent = received.length;
      await log.getByRole('button', { name: /^Retry the delivery of the contact\.created attempt/ }).first().click();
      await page.getByText('The contact.created delivery is being sent again').waitFor();
      for (let i = 0; !received.slice(sent).some((r) => r.delivery === failed.delivery); i++) {
        assert.ok(i < 300, 'the retry carries the same X-Service-Delivery');
        await new Promise((r) => setTimeout(r, 50));
      }
      const again = received.slice(sent).find((r) => r.delivery === failed.delivery);
      assert.equal(again.body, failed.body, 'byte for byte');
      await screen(page, 'webhook-retry');
      await page.done();
    });

    test('an admin recovers the events that failed since a time', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/webhooks');
      await page.getByRole('button', { name: `Delivery log of ${url}` }).click();
      await page.getByRole('button', { name: 'Recover failed events' }).click();
      const d = page.getByRole('dialog', { name: `Recover the failed events of ${url}` });
      const since = d.getByLabel('Since');
      assert.ok(await since.inputValue(), 'a time is proposed');
      await since.fill('2001-01-01T00:00');
      await d.getByRole('button', { name: 'Recover' }).click();
      await d.getByText('Choose a time within the last 30 days.').waitFor();
      const hourAgo = new Date(Date.now() - 3600 * 1000);
      const pad = (n) => String(n).padStart(2, '0');
      await since.fill(`${hourAgo.getFullYear()}-${pad(hourAgo.getMonth() + 1)}-${pad(hourAgo.getDate())}T${pad(hourAgo.getHours())}:${pad(hourAgo.getMinutes())}`);
      await screen(page, 'webhook-recover');
      const sent = received.length;
      await d.getByRole('button', { name: 'Recover' }).click();
      await page.getByText('1 failed event is being sent again, oldest first.').waitFor();
      await receivedAtLeast(sent + 1, 'the recovery sent the failed event');
      assert.equal(JSON.parse(received[sent].body).data.first_name, 'Fail');
      await page.done();
    });

    test('the rate limit is set in the form; a webhook the service switched off shows why and is enabled again', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/webhooks');
      await page.getByRole('button', { name: `Edit ${url}` }).click();
      let d = page.getByRole('dialog', { name: `Edit the webhook to ${url}` });
      const rate = d.getByLabel('Rate limit (deliveries a second)');
      await rate.fill('5000');
      await d.getByRole('button', { name: 'Save webhook' }).click();
      await d.getByText('Enter a whole number from 1 to 1,000, or leave it empty for no limit.').waitFor();
      await rate.fill('5');
      await d.getByRole('button', { name: 'Save webhook' }).click();
      await page.getByRole('cell', { name: '5 a second' }).waitFor();
      assert.equal(env.db(`SELECT rate_limit FROM webhooks WHERE url = '${url}'`), '5');

      // Switched off by the service, with a delivery kept for later.
      const reason = 'Every delivery attempt has failed since 2 March 2026, 09:00 UTC (5 days or more), so the webhook was switched off.';
      env.db(`UPDATE webhooks SET active = false, disabled_at = now(), disabled_reason = '${reason}' WHERE url = '${url}'`);
      const good = received.find((r) => JSON.parse(r.body).data?.first_name === 'Good');
      env.db(`UPDATE webhook_deliveries SET status = 'held' WHERE id = '${good.delivery}'`);
      await page.reload();
      await page.getByRole('cell', { name: new RegExp(`^Switched off by the service on .*${reason.replace(/[().]/g, '\\$&')}`) }).waitFor();
      await screen(page, 'webhook-switched-off');
      const sent = received.length;
      await page.getByRole('button', { name: `Enable ${url}` }).click();
      await page.getByText(`The webhook to ${url} is enabled: the deliveries kept while it was off are being sent, oldest first.`).waitFor();
      await receivedAtLeast(sent + 1, 'the kept delivery was sent');
      assert.equal(received[sent].delivery, good.delivery);
      assert.equal(env.db(`SELECT active::text || coalesce(disabled_reason, '-') FROM webhooks WHERE url = '${url}'`), 'true-');
      await page.getByRole('cell', { name: 'Enabled', exact: true }).waitFor();
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

      // A disabled webhook's failed events are recovered too, and kept until it is enabled.
      const failed = received.find((r) => JSON.parse(r.body).data?.first_name === 'Fail');
      await page.getByRole('button', { name: `Delivery log of ${url}` }).click();
      await page.getByRole('button', { name: 'Recover failed events' }).click();
      const r = page.getByRole('dialog', { name: `Recover the failed events of ${url}` });
      await r.getByText('The webhook is disabled: these events are kept and sent once it is enabled.').waitFor();
      await r.getByRole('button', { name: 'Recover' }).click();
      await page.getByText('1 failed event is queued: it is sent once the webhook is enabled.').waitFor();
      for (let i = 0; env.db(`SELECT status FROM webhook_deliveries WHERE id = '${failed.delivery}'`) !== 'held'; i++) {
        assert.ok(i < 200, 'the recovered event is kept');
        await new Promise((res) => setTimeout(res, 50));
      }
      await page.getByRole('button', { name: `Delete ${url}` }).click();
      await page.getByRole('dialog', { name: `Delete the webhook to ${url}?` }).getByRole('button', { name: 'Delete webhook' }).click();
      await page.getByText('No webhook yet.').waitFor();
      assert.equal(hooks(), '');
      await page.done();
    });

    test('the editor lists the event types in groups, engagement events among them', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/webhooks');
      await page.getByRole('button', { name: 'New webhook' }).click();
      const d = page.getByRole('dialog', { name: 'New webhook' });
      const groups = { Contacts: 'contact.created', Emails: 'email.opened', Campaigns: 'participant.completed', Subscriptions: 'contact.unsubscribed', Team: 'member.joined' };
      for (const [group, type] of Object.entries(groups)) {
        await d.getByRole('group', { name: group }).getByLabel(new RegExp(`^${type.replace('.', '\\.')}:`)).waitFor();
      }
      assert.equal(await d.getByRole('group', { name: 'Emails' }).getByRole('checkbox').count(), 7, 'every email.* type is in Emails');
      await d.getByRole('group', { name: 'Contacts' }).getByLabel(/^event\.received: A product event of a contact was received/).waitFor();
      await d.getByRole('group', { name: 'Emails' }).getByLabel(/^email\.opened: The email was first opened/).check();
      await d.getByRole('group', { name: 'Campaigns' }).getByLabel(/^participant\.completed:/).check();
      await d.getByRole('group', { name: 'Contacts' }).getByLabel(/^event\.received:/).check();
      await screen(page, 'webhook-event-groups');
      const engagement = `${url}?engagement`;
      await d.getByLabel('URL').fill(engagement);
      await d.getByRole('button', { name: 'Create webhook' }).click();
      await page.getByRole('dialog', { name: "The webhook's signing secret" }).getByRole('button', { name: 'Done' }).click();
      assert.equal(env.db(`SELECT array_to_string(events, ',') FROM webhooks WHERE url = '${engagement}'`), 'email.opened,participant.completed,event.received');
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
