// A book's email settings: the owner fills them in (the provider key then
// shows masked, and saving the mask keeps the stored key), the setup
// checklist follows, events arriving included; admins read, viewers are
// told why they cannot.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Email settings', { concurrency: 1 }, () => {
    let env, owner, admin, viewer, book;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      admin = await env.member(owner, 'admin');
      viewer = await env.member(owner, 'viewer');
      env.db(`UPDATE teams SET campaign_addon = 'trial' WHERE id = '${owner.teamId}'`);
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Letters' } })).data.id;
    });
    const storedKey = () => env.db(`SELECT encode(mailer_api_key_enc, 'hex') FROM email_settings WHERE book_id = '${book}'`);

    test('the owner sets up sending step by step, guided by the checklist', async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/contacts`);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'Email settings of Letters' }).waitFor();
      const checklist = page.getByRole('region', { name: 'Setup checklist' });
      await checklist.getByText('SendGrid key saved: to do.').waitFor();
      assert.equal(await checklist.getByText(': to do.').count(), 4);
      assert.equal(await page.getByLabel('Event Webhook URL').inputValue(), `${env.url}/api/mailer/events/${book}`);

      await page.getByLabel('Sender name').fill('Letters Team');
      await page.getByLabel('Sender email').fill('letters@acme.example');
      await page.getByLabel('Company name').fill('Acme Inc.');
      await page.getByLabel('Address line 1').fill('1 Main St');
      await page.getByLabel('City').fill('Springfield');
      await page.getByLabel('Country').fill('USA');
      await page.getByLabel('SendGrid API key').fill(env.mailerKey);
      await page.getByLabel('Track opens').check();
      await page.getByLabel('Event Webhook verification key').fill(env.eventKey.publicKey);
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('Email settings saved.').waitFor();
      assert.equal(await page.getByLabel('SendGrid API key').inputValue(), '****ests');
      assert.equal(await checklist.getByText(': done.').count(), 3);
      await checklist.getByText('No signed batch from SendGrid yet').waitFor();

      // Saving again with the mask in the key field keeps the stored key.
      await page.getByLabel('Sender name').fill('Letters');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('Email settings saved.').waitFor();
      // The stored key is sealed anew on each save, so it is checked by use:
      // a test email goes out with it (the fake provider refuses any other key).
      assert.notEqual(storedKey(), '');
      const tpl = (await env.api('POST', '/api/campaign-templates', { token: owner.token, book, body: { name: 'Check', subject: 'Key check', body_html: '<p>Hi</p>' } })).data.id;
      await env.api('POST', `/api/campaign-templates/${tpl}/send-test`, { token: owner.token, book, body: { email: owner.email } });
      assert.equal(env.mails.filter((m) => m.to.toLowerCase() === owner.email.toLowerCase() && m.subject.includes('Key check')).length, 1, 'the masked value left the stored key as it was');
      assert.equal(env.db(`SELECT sender_name || '/' || track_opens || '/' || track_clicks FROM email_settings WHERE book_id = '${book}'`), 'Letters/true/false');

      // A signed batch from the provider: events are arriving.
      const r = await env.providerEvents(book, [[{ to: 'nobody@example.com', messageId: 'none', customArgs: {} }, 'delivered']]);
      assert.equal(r.data.received, 1);
      await page.reload();
      await checklist.getByText('Delivery events arriving: done.').waitFor();
      assert.equal(await checklist.getByText(': to do.').count(), 0);
      await screen(page, 'email-settings');
      await page.done();
    });

    test('an admin reads the settings; a viewer is told why not', async (t) => {
      const page = await env.page(t);
      await login(page, admin, `/app/books/${book}/settings`);
      await page.getByText('Only the team\'s owner changes these settings.').waitFor();
      assert.equal(await page.getByLabel('Sender email').getAttribute('readonly'), '');
      assert.equal(await page.getByRole('button', { name: 'Save settings' }).count(), 0);
      await page.getByRole('button', { name: 'Copy URL' }).waitFor();
      await screen(page, 'email-settings-admin');
      await page.done();

      const v = await env.page(t);
      await login(v, viewer, `/app/books/${book}/settings`);
      await v.getByText('Needs the member role or higher.').waitFor();
      assert.equal(await v.getByLabel('Sender email').count(), 0);
      await v.done();
    });
  });
