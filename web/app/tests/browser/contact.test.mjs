// The contact editor and page: every field, errors at the field, the
// duplicate-email warning, labels and custom fields; roles.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Contact page and editor', { concurrency: 1 }, () => {
    let env, owner, book;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'People', enforce_unique_emails: true } })).data.id;
      await env.api('POST', `/api/books/${book}/labels`, { token: owner.token, body: { name: 'Friend', color: '#1D4ED8' } });
      await env.api('POST', `/api/books/${book}/fields`, { token: owner.token, body: { key: 'shoe_size', name: 'Shoe size', type: 'number' } });
      await env.api('POST', '/api/contacts', { token: owner.token, book, body: { first_name: 'Maria', last_name: 'Garcia', emails: [{ address: 'maria@example.com' }] } });
    });

    test('create a contact: errors at the fields, duplicate warning, every kind of field', async (t) => {
      const page = await env.page(t);
      await login(page, owner);
      await page.getByRole('button', { name: 'New contact' }).click();
      await page.getByRole('heading', { name: 'New contact' }).waitFor();

      // Nothing filled in: the name field says what is missing and takes focus.
      await page.getByRole('button', { name: 'Add email' }).click();
      await page.getByLabel('Email 1', { exact: true }).fill('not-an-address');
      await page.getByRole('button', { name: 'Add phone' }).click();
      await page.getByLabel('Phone 1', { exact: true }).fill('call me maybe');
      await page.getByLabel('Website').fill('ftp://example.com');
      await page.getByLabel('Shoe size').fill('big');
      await page.getByRole('button', { name: 'Create contact' }).click();
      const firstName = page.getByLabel('First name');
      assert.equal(await firstName.getAttribute('aria-invalid'), 'true');
      await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true');
      for (const label of ['First name', 'Email 1', 'Phone 1', 'Website', 'Shoe size']) {
        assert.equal(await page.getByLabel(label, { exact: true }).getAttribute('aria-invalid'), 'true', label);
      }
      await page.getByText('Give a first name, a last name or a company.').waitFor();
      await page.getByText('Enter an email address like name@example.com.').waitFor();
      await screen(page, 'contact-editor-errors');

      // An address the book has: a warning while typing, naming the contact.
      await page.getByLabel('Email 1', { exact: true }).fill('MARIA@example.com');
      await page.getByText('Maria Garcia already has this address, and this book allows each address once.').waitFor();
      await screen(page, 'contact-editor-duplicate');
      // Saving anyway: the server's refusal lands at the email field.
      await firstName.fill('Ana');
      await page.getByLabel('Phone 1', { exact: true }).fill('+34 600 123 456');
      await page.getByLabel('Website').fill('https://ana.example');
      await page.getByLabel('Shoe size').fill('38');
      await page.getByRole('button', { name: 'Create contact' }).click();
      await page.waitForFunction(() => document.querySelector('[aria-invalid="true"]')?.closest('.field')?.textContent?.includes('Email 1'));

      await page.getByLabel('Email 1', { exact: true }).fill('ana@example.com');
      await page.getByLabel('Last name').fill('Ruiz');
      await page.getByLabel('Company').fill('Northwind');
      await page.getByLabel('Job title').fill('Buyer');
      await page.getByRole('button', { name: 'Add email' }).click();
      await page.getByLabel('Email 2', { exact: true }).fill('ana@home.example');
      await page.getByLabel('Kind of email 2').selectOption('personal');
      await page.getByRole('button', { name: 'Add address' }).click();
      await page.getByLabel('Street, address 1').fill('Calle Mayor 1');
      await page.getByLabel('City, address 1').fill('Madrid');
      await page.getByLabel('Country, address 1').fill('Spain');
      await page.getByLabel('Birthday').fill('1990-04-01');
      await page.getByRole('button', { name: 'Add date' }).click();
      await page.getByLabel('What, date 1').fill('customer since');
      await page.getByLabel('Date 1', { exact: true }).fill('2019-05-01');
      await page.getByRole('button', { name: 'Add profile' }).click();
      await page.getByLabel('Handle or link, profile 1').fill('anaruiz');
      await page.getByRole('button', { name: 'Add relationship' }).click();
      await page.getByLabel('Relation 1', { exact: true }).fill('colleague');
      await page.getByLabel('Name, relation 1').fill('Maria Garcia');
      await page.getByLabel('Notes').fill('Met at the fair.');
      await page.getByLabel('Friend').check();
      await page.getByLabel('Starred').check();
      await page.getByRole('button', { name: 'Create contact' }).click();

      await page.getByRole('heading', { name: 'Ana Ruiz' }).waitFor();
      for (const text of ['Northwind', 'ana@home.example', '+34 600 123 456', 'Calle Mayor 1, Madrid, Spain', '1990-04-01', '2019-05-01', 'anaruiz', 'Maria Garcia', 'Met at the fair.', 'Friend']) {
        await page.getByText(text, { exact: false }).first().waitFor();
      }
      // The team has no Campaigns add-on: the page says so instead of an empty list.
      await page.getByText('Campaigns need the Campaigns add-on. Billing shows how to get it.').waitFor();
      const id = new URL(page.url()).pathname.split('/').pop();
      assert.equal(env.db(`SELECT value FROM contact_field_values v JOIN field_definitions f ON f.id = v.field_id WHERE v.contact_id = '${id}' AND f.key = 'shoe_size'`), '38');
      assert.equal(env.db(`SELECT starred FROM contacts WHERE id = '${id}'`), 't');
      await screen(page, 'contact-page');

      // Edit: change the company, drop the label; the page shows the result.
      await page.getByRole('link', { name: 'Edit contact' }).click();
      await page.getByLabel('Company').fill('Contoso');
      await page.getByLabel('Friend').uncheck();
      await screen(page, 'contact-editor');
      await page.getByRole('button', { name: 'Save contact' }).click();
      await page.getByRole('heading', { name: 'Ana Ruiz' }).waitFor();
      await page.getByText('Contoso').waitFor();
      assert.equal(env.db(`SELECT count(*) FROM contact_labels WHERE contact_id = '${id}'`), '0');

      await page.getByRole('button', { name: 'Delete contact' }).click();
      await page.getByRole('dialog', { name: 'Delete Ana Ruiz?' }).getByRole('button', { name: 'Delete contact' }).click();
      await page.getByRole('heading', { name: 'People' }).waitFor();
      assert.equal(env.db(`SELECT count(*) FROM contacts WHERE id = '${id}'`), '0');
      await page.done();
    });

    test('a refused custom field value does not create the contact twice', async (t) => {
      await env.api('POST', `/api/books/${book}/fields`, { token: owner.token, body: { key: 'nickname', name: 'Nickname', type: 'text' } });
      const page = await env.page(t);
      await login(page, owner, `/app/books/${book}/contacts/new`);
      await page.getByLabel('First name').fill('Once');
      await page.getByLabel('Nickname').fill('x'.repeat(10001));
      await page.getByRole('button', { name: 'Create contact' }).click();
      await page.getByRole('alert').filter({ hasText: 'value must be at most 10000 characters long' }).or(page.getByRole('alert').filter({ hasText: '`value` must be at most 10000 characters long' })).waitFor();
      await page.getByLabel('Nickname').fill('Uno');
      await page.getByRole('button', { name: 'Create contact' }).click();
      await page.getByRole('heading', { name: 'Once' }).waitFor();
      assert.equal(env.db(`SELECT count(*) FROM contacts WHERE first_name = 'Once'`), '1');
      await page.getByText('Uno').waitFor();
      await page.done();
    });

    test('a viewer reads a contact but has no control to change it', async (t) => {
      const viewer = await env.member(owner, 'viewer');
      const id = env.db(`SELECT id FROM contacts WHERE first_name = 'Maria'`);
      const page = await env.page(t);
      await login(page, viewer, `/app/contacts/${id}`);
      await page.getByRole('heading', { name: 'Maria Garcia' }).waitFor();
      for (const name of ['Edit contact', 'Delete contact', '☆ Star']) {
        assert.equal(await page.getByRole('link', { name }).or(page.getByRole('button', { name })).count(), 0, name);
      }
      await screen(page, 'contact-page-viewer');
      await page.goto(`/app/contacts/${id}/edit`);
      await page.getByText('You can view contacts but not change them.').waitFor();
      await page.done();
    });

    test('without the Campaigns add-on the page does not ask for the contact\'s campaigns', async (t) => {
      const id = env.db(`SELECT id FROM contacts WHERE first_name = 'Maria'`);
      const page = await env.page(t);
      const asked = [];
      const refused = [];
      page.on('request', (r) => new URL(r.url()).pathname.endsWith('/campaigns') && asked.push(r.url()));
      page.on('console', (m) => m.type() === 'error' && refused.push(m.text()));
      await login(page, owner, `/app/contacts/${id}`);
      await page.getByRole('heading', { name: 'Maria Garcia' }).waitFor();
      await page.getByText('Campaigns need the Campaigns add-on. Billing shows how to get it.').waitFor();
      assert.deepEqual(asked, [], 'no request for the contact\'s campaigns');
      assert.deepEqual(refused, [], 'nothing logged to the console (a refused request logs its 403)');
      await page.done();
    });
  });
