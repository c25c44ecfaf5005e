// Sign-up forms end to end: a member builds a form in the editor (live
// preview, link, embed snippet), a visitor signs up on the hosted page in
// the browser, confirms from the emailed link, and the contact appears with
// its consent; admins can export and erase the person.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Sign-up forms', { concurrency: 1 }, () => {
    let env, owner, book;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      ({ book } = await env.campaignBook(owner, 'Signups'));
      await env.api('POST', `/api/books/${book}/labels`, { token: owner.token, body: { name: 'Events', public: true, description: 'Meetups near you' } });
    });

    /** confirmLink waits for the confirmation email to `to` and returns its link (in both parts). */
    async function confirmLink(to) {
      for (const end = Date.now() + 15000; Date.now() < end; ) {
        const m = env.mails.find((m) => m.to === to && /\/api\/forms\/confirm\?token=/.test(m.text));
        if (m) {
          const link = /https?:\/\/\S+\/api\/forms\/confirm\?token=[A-Za-z0-9_%-]+/.exec(m.text)[0];
          assert.ok(m.html.includes(link), 'the HTML part holds the link');
          assert.match(m.text, /Acme Inc\., 1 Main St/);
          return link;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no confirmation email to ${to}`);
    }

    test('create a form, sign up on its page, confirm by email, see the contact and its consent', async (t) => {
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/forms`);
      await page.getByRole('link', { name: 'Forms' }).waitFor();
      await page.getByRole('link', { name: 'New form' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Newsletter <b>');
      await page.getByLabel('First name required').check();
      await page.getByLabel('Ask for Topics').check();
      await page.getByLabel('Consent text').fill('I agree to the monthly newsletter.');
      // The preview follows the editor before anything is saved.
      const preview = page.getByRole('complementary', { name: 'Preview of the hosted page' });
      await preview.getByText('Newsletter <b>').waitFor();
      await preview.getByText('☐ I agree to the monthly newsletter.').waitFor();
      await preview.getByText(/Events — Meetups near you/).waitFor();
      await page.getByRole('button', { name: 'Create form' }).click();
      await page.getByText('Form saved.').waitFor();
      const link = await page.getByLabel('Link to the hosted page').inputValue();
      assert.match(link, /\/f\/[0-9a-f-]{36}$/);
      const snippet = await page.getByLabel('Embed snippet').inputValue();
      assert.match(snippet, /<form method="post" action="http[^"]+\/api\/forms\/[0-9a-f-]{36}\/submissions">/);
      assert.match(snippet, /name="company_website"/);
      await screen(page, 'form-editor');

      // A visitor signs up on the hosted page: no script, labelled fields.
      await page.goto(link);
      await page.getByRole('heading', { name: 'Newsletter <b>' }).waitFor();
      await screen(page, 'form-hosted');
      await page.getByLabel('Email').fill('visitor@example.com');
      await page.getByLabel('First name').fill('Vera');
      await page.getByLabel('Events').check();
      await page.getByLabel('I agree to the monthly newsletter.').check();
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.getByRole('heading', { name: 'Thank you' }).waitFor();

      // The emailed link opens a page whose button confirms.
      await page.goto(await confirmLink('visitor@example.com'));
      await page.getByText('Nothing has changed yet.').waitFor();
      await page.getByRole('button', { name: 'Confirm subscription' }).click();
      await page.getByRole('heading', { name: 'Subscription confirmed' }).waitFor();

      // The contact, with its labels and its consent; the form counts it.
      await page.goto(`/app/books/${book}/contacts`);
      await page.getByRole('link', { name: /Vera/ }).click();
      const consents = page.getByRole('table', { name: 'Consents of this contact' });
      await consents.getByRole('cell', { name: 'I agree to the monthly newsletter.' }).waitFor();
      await consents.getByRole('cell', { name: 'Confirmed by email' }).waitFor();
      await page.getByRole('button', { name: 'Export personal data' }).waitFor();
      await screen(page, 'contact-consents');
      await page.goto(`/app/books/${book}/forms`);
      const row = page.getByRole('table', { name: 'Sign-up forms' }).getByRole('row', { name: /Newsletter/ });
      await row.getByRole('cell', { name: '1', exact: true }).first().waitFor();
      await page.done();
    });

    test('an admin erases a person; the address stays suppressed by its hash', async (t) => {
      const as = (method, path, body) => env.api(method, path, { token: owner.token, body, book });
      const contact = (await as('POST', '/api/contacts', { first_name: 'Gone', emails: [{ address: 'gone@example.com', label: 'work', primary: true }] })).data.id;
      await as('POST', '/api/suppressions', { email: 'gone@example.com', reason: 'manual' });
      const page = await env.page(t);
      await login(page, owner, `/app/contacts/${contact}`);
      await page.getByRole('button', { name: 'Erase this person' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Erase person' }).click();
      await page.waitForURL(`**/app/books/${book}/contacts`);
      await page.goto(`/app/books/${book}/suppressions`);
      await page.getByRole('cell', { name: /^Erased person \([0-9a-f]{12}…\)$/ }).waitFor();
      await page.done();
    });
  });
