// Sending providers on the email settings screen: the owner picks SendGrid,
// an SMTP relay or Amazon SES and sees only that provider's fields, saves
// them (secrets come back masked), verifies the connection against the
// test relay and the fake SES (and sees what failed when it fails), finds
// the SES notification URL, and the campaign screens say what is missing
// until the book can send.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Sending providers', { concurrency: 1 }, () => {
    let env, owner, book;
    before(async () => {
      env = await start();
      assert.ok(env.mailFakes, 'the browser suite runs with MAILFAKES_BIN (run.mjs builds it)');
      owner = await env.signup('Owner');
      env.db(`UPDATE teams SET campaign_addon = 'trial' WHERE id = '${owner.teamId}'`);
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Relay' } })).data.id;
    });

    async function sender(page) {
      await page.getByLabel('Sender name').fill('Relay Team');
      await page.getByLabel('Sender email').fill('relay@acme.example');
      await page.getByLabel('Company name').fill('Acme Inc.');
      await page.getByLabel('Address line 1').fill('1 Main St');
      await page.getByLabel('City').fill('Springfield');
      await page.getByLabel('Country').fill('USA');
    }

    // save saves the form and waits for the server's answer: the notice of
    // an earlier save may still be showing.
    async function save(page) {
      const saved = page.waitForResponse((r) => r.url().endsWith('/api/campaign-settings') && r.request().method() === 'PUT');
      await page.getByRole('button', { name: 'Save settings' }).click();
      assert.equal((await saved).status(), 200);
      await page.getByText('Email settings saved.').waitFor();
    }

    async function verify(page, expect) {
      await page.getByRole('button', { name: 'Verify connection' }).click();
      await page.getByRole('status').filter({ hasText: expect }).waitFor();
    }

    test('the campaign screens say sending is not set up until it is', async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/campaigns`);
      const setup = page.getByRole('region', { name: 'Sending is not set up' });
      await setup.getByText('Email settings saved: to do.').waitFor();
      await setup.getByRole('link', { name: 'Open the email settings' }).click();
      await page.getByRole('heading', { name: 'Email settings of Relay' }).waitFor();
      await page.done();
    });

    test('an SMTP relay: only its fields, verified for real, the wrong password named', async (t) => {
      const page = await env.page(t);
      const smtp = env.mailFakes.smtp;
      await login(page, owner, `/app/books/${book}/settings`);
      await page.getByRole('heading', { name: 'Email settings of Relay' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Verify connection' }).isDisabled(), true, 'nothing saved to verify yet');
      await sender(page);
      await page.getByLabel('Provider').selectOption('smtp');
      assert.equal(await page.getByLabel('SendGrid API key').count(), 0);
      assert.equal(await page.getByLabel('Event Webhook URL').count(), 0);
      assert.equal(await page.getByLabel('AWS region').count(), 0);
      await page.getByLabel('SMTP host').fill(smtp.host);
      await page.getByLabel('SMTP port').fill(String(smtp.port));
      assert.equal(await page.getByLabel('Security').inputValue(), 'starttls');
      await page.getByLabel('SMTP user').fill(smtp.username);
      await page.getByLabel('SMTP password').fill(smtp.password);
      await save(page);
      const checklist = page.getByRole('region', { name: 'Setup checklist' });
      await checklist.getByText('SMTP relay set: done.').waitFor();
      await checklist.getByText('Bounce mailbox set: to do.').waitFor();
      assert.match(await page.getByLabel('SMTP password').inputValue(), /^\*\*\*\*/);
      assert.equal(env.db(`SELECT provider || '/' || smtp_host || '/' || smtp_port FROM email_settings WHERE book_id = '${book}'`), `smtp/${smtp.host}/${smtp.port}`);
      await verify(page, 'Connection works');
      await screen(page, 'email-settings-smtp');

      // The masked password kept; a wrong one is reported as the relay said it.
      await page.getByLabel('SMTP password').fill('not-the-password');
      await save(page);
      await verify(page, 'Connection failed: 535');
      assert.equal(await page.getByText('not-the-password').count(), 0);

      // A bounce mailbox: its fields appear when asked for.
      await page.getByLabel('Read bounces from a mailbox').check();
      await page.getByLabel('IMAP host').fill('imap.acme.example');
      await page.getByLabel('IMAP user').fill('bounces@acme.example');
      await page.getByLabel('IMAP password').fill('imap-secret');
      await page.getByLabel('SMTP password').fill(smtp.password);
      await save(page);
      await checklist.getByText('Bounce mailbox set: done.').waitFor();
      assert.equal(await page.getByLabel('IMAP folder').inputValue(), 'INBOX');
      await page.done();

      // The campaign screens no longer warn.
      const list = await env.page(t);
      await login(list, owner, `/app/books/${book}/campaigns`);
      await list.getByRole('heading', { name: 'Campaigns of Relay' }).waitFor();
      await list.getByRole('button', { name: 'New campaign' }).waitFor();
      assert.equal(await list.getByRole('region', { name: 'Sending is not set up' }).count(), 0);
      await list.done();
    });

    test('Amazon SES: its fields, the SNS notification URL, verified with GetAccount', async (t) => {
      const page = await env.page(t);
      const ses = env.mailFakes.ses;
      await login(page, owner, `/app/books/${book}/settings`);
      await page.getByRole('heading', { name: 'Email settings of Relay' }).waitFor();
      await page.getByLabel('Provider').selectOption('ses');
      assert.equal(await page.getByLabel('SMTP host').count(), 0);
      assert.equal(await page.getByLabel('SES notification URL').inputValue(), `${env.url}/api/mailer/ses/${book}`);
      await page.getByLabel('AWS region').fill(ses.region);
      await page.getByLabel('Access key id').fill(ses.access_key_id);
      await page.getByLabel('Secret access key').fill('wrong-secret');
      await save(page);
      await verify(page, 'Connection failed');
      await page.getByLabel('Secret access key').fill(ses.secret_access_key);
      await save(page);
      await page.getByRole('region', { name: 'Setup checklist' }).getByText('Amazon SES credentials saved: done.').waitFor();
      await verify(page, 'Connection works');
      assert.equal(await page.getByText(ses.secret_access_key).count(), 0);
      await screen(page, 'email-settings-ses');

      // A field of the wrong provider never reaches the server: switching back
      // to SendGrid shows only its fields, and its key verifies.
      await page.getByLabel('Provider').selectOption('sendgrid');
      assert.equal(await page.getByLabel('AWS region').count(), 0);
      await page.getByLabel('SendGrid API key').fill(env.mailerKey);
      await save(page);
      await verify(page, 'Connection works');
      await page.done();
    });
  });
