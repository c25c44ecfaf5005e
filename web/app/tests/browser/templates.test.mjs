// Email templates: the list, the editor (merge-field picker at the cursor,
// fallbacks, custom fields, image upload), the live preview rendered by the
// server for a chosen contact (inline styles shown), a test email through
// the fake provider, and what a viewer may do.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

// A 1x1 PNG.
const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

export default () =>
  describe('Email templates', { concurrency: 1 }, () => {
    let env, owner, member, viewer, book, bob;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      member = await env.member(owner, 'member', 'Mick');
      viewer = await env.member(owner, 'viewer', 'Vera');
      let as;
      ({ book, as } = await env.campaignBook(owner, 'Letters'));
      await as('POST', `/api/books/${book}/fields`, { key: 'plan', name: 'Plan', type: 'text' });
      await as('POST', '/api/contacts', { first_name: 'Ann', last_name: 'Oldest' });
      bob = (await as('POST', '/api/contacts', { first_name: 'Bob', last_name: 'Newer' })).data.id;
    });

    test('a member writes a template with merge fields, an image and a live preview, then tests it', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/contacts`);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('heading', { name: 'Email templates of Letters' }).waitFor();
      await page.getByText('No template yet: write the first one.').waitFor();
      await page.getByRole('link', { name: 'New template' }).click();
      await page.getByRole('heading', { name: 'New template' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Welcome');

      // The picker inserts at the cursor of the field focused last.
      const subject = page.getByLabel('Subject', { exact: true });
      await subject.fill('Hello !');
      await subject.focus();
      await subject.evaluate((el) => el.setSelectionRange(6, 6));
      await page.getByLabel('Field', { exact: true }).selectOption('first_name');
      await page.getByLabel('Fallback').fill('friend');
      await page.getByRole('button', { name: 'Insert field' }).click();
      assert.equal(await subject.inputValue(), 'Hello {{first_name | default: "friend"}}!');

      const body = page.getByLabel('Body (HTML)');
      await body.fill('<p style="color: rgb(200, 0, 0)">Hi {{full_name}}, your plan: </p>');
      await body.focus();
      await body.evaluate((el) => el.setSelectionRange(el.value.length - 4, el.value.length - 4));
      await page.getByLabel('Field', { exact: true }).selectOption('custom.plan');
      await page.getByLabel('Fallback').fill('');
      await page.getByRole('button', { name: 'Insert field' }).click();
      assert.equal(await body.inputValue(), '<p style="color: rgb(200, 0, 0)">Hi {{full_name}}, your plan: {{custom.plan}}</p>');

      // An uploaded image goes in at the cursor of the body.
      await body.focus();
      await body.evaluate((el) => el.setSelectionRange(el.value.length, el.value.length));
      await page.getByLabel('Insert image').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: png });
      await page.waitForFunction(() => document.querySelector('textarea')?.value.includes('<img src="'));
      const src = /<img src="([^"]+)"/.exec(await body.inputValue())[1];
      assert.match(src, new RegExp(`^${env.url}/images/[0-9a-f]+\\.png$`));
      assert.equal((await fetch(src)).status, 200);

      // The preview: the oldest contact first, then the one chosen; inline styles show.
      const subjectSent = page.getByLabel('Subject as sent');
      await page.waitForFunction(() => document.querySelector('output')?.textContent === 'Hello Ann!');
      await page.getByLabel('Preview with').selectOption(bob);
      await page.waitForFunction(() => document.querySelector('output')?.textContent === 'Hello Bob!');
      assert.equal(await subjectSent.textContent(), 'Hello Bob!');
      const email = page.frameLocator('iframe[title="Preview of the email"]').frameLocator('iframe');
      const greeting = email.getByText('Hi Bob Newer, your plan:');
      await greeting.waitFor();
      assert.equal(await greeting.evaluate((el) => getComputedStyle(el).color), 'rgb(200, 0, 0)');
      await email.getByText('Acme Inc.').first().waitFor(); // the footer, as sending adds it
      await screen(page, 'template-editor');

      await page.getByRole('button', { name: 'Create template' }).click();
      await page.getByText('Template saved.').waitFor();
      await page.waitForURL(/\/templates\/[0-9a-f-]{36}$/);
      assert.equal(env.db(`SELECT subject FROM email_templates WHERE book_id = '${book}' AND name = 'Welcome'`), 'Hello {{first_name | default: "friend"}}!');

      // A test email of the saved version, through the fake provider.
      assert.equal(await page.getByLabel('Send a test to').inputValue(), member.email);
      // Test emails go to the team's members and the book's contacts only.
      await page.getByLabel('Send a test to').fill('stranger@example.org');
      await page.getByRole('button', { name: 'Send test email' }).click();
      await page.getByText(/must be the address of a member of the team or of a contact of the book/).waitFor();
      await page.getByLabel('Send a test to').fill(owner.email);
      await page.getByRole('button', { name: 'Send test email' }).click();
      await page.getByText(`The test email was sent to ${owner.email}.`).waitFor();
      const mail = env.mails.find((m) => m.to.toLowerCase() === owner.email.toLowerCase());
      assert.equal(mail.subject, '[TEST] Hello Ann!');
      assert.match(mail.html, /Hi Ann Oldest, your plan: /);
      // Unsaved changes: the test waits for a save.
      await page.getByLabel('Name', { exact: true }).fill('Welcome 2');
      await page.getByText('Save the template first').waitFor();
      await page.done();
    });

    test('the list opens templates; a viewer reads but cannot change or delete', async (t) => {
      const page = await env.page(t);
      await login(page, viewer, `/app/books/${book}/templates`);
      await page.getByRole('link', { name: 'Welcome' }).click();
      await page.getByRole('heading', { name: 'Template Welcome' }).waitFor();
      assert.equal(await page.getByLabel('Subject', { exact: true }).isDisabled(), true);
      assert.equal(await page.getByRole('button', { name: 'Save template' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Insert field' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Send test email' }).count(), 0);
      await page.waitForFunction(() => document.querySelector('output')?.textContent === 'Hello Ann!');
      await screen(page, 'template-viewer');
      await page.goto(`/app/books/${book}/templates`);
      await page.getByRole('table', { name: 'Email templates' }).getByRole('link', { name: 'Welcome' }).waitFor();
      assert.equal(await page.getByRole('button', { name: /^Delete/ }).count(), 0);
      await screen(page, 'templates');
      await page.done();
    });

    test('a member deletes a template', async (t) => {
      const page = await env.page(t);
      await login(page, member, `/app/books/${book}/templates`);
      await page.getByRole('button', { name: 'Delete Welcome' }).click();
      await page.getByRole('dialog', { name: 'Delete the template “Welcome”?' }).getByRole('button', { name: 'Delete template' }).click();
      await page.getByText('The template “Welcome” was deleted.').waitFor();
      assert.equal(env.db(`SELECT count(*) FROM email_templates WHERE book_id = '${book}'`), '0');
      await page.done();
    });
  });
