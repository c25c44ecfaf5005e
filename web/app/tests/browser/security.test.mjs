// Team security: two-factor sign-in turned on with a code the test
// computes (RFC 6238, as an authenticator app does), signing in with it and
// with a recovery code, the sessions list, API key scope and expiry, the
// audit log, and a team that requires two-factor sign-in.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

/** totp is the 6-digit code of a base32 secret, stepsAhead 30-second steps from now. */
function totp(secret, stepsAhead = 0) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of secret.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000) + stepsAhead));
  const h = createHmac('sha1', key).update(counter).digest();
  const o = h[h.length - 1] & 0xf;
  return String((h.readUInt32BE(o) & 0x7fffffff) % 1000000).padStart(6, '0');
}

async function openMenuItem(page, name) {
  await page.getByRole('button', { name: /account menu/ }).click();
  await page.getByRole('link', { name }).click();
}

async function logOut(page) {
  await page.getByRole('button', { name: /account menu/ }).click();
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('button', { name: 'Log in' }).waitFor();
}

async function password(page, user) {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
}

export default () =>
  describe('Team security', { concurrency: 1 }, () => {
    let env;
    before(async () => (env = await start()));

    test('two-factor sign-in: turn on with a code, sign in with a code and with a recovery code, see the audit entries', async (t) => {
      const ann = await env.signup('Sec');
      await env.api('POST', '/api/books', { token: ann.token, body: { team_id: ann.teamId, name: 'Leads' } });
      const page = await env.page(t);
      await login(page, ann);
      await openMenuItem(page, 'Security');
      await page.getByRole('heading', { name: 'Security' }).waitFor();
      await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
      const secret = await page.getByLabel('Setup key').inputValue();
      await screen(page, 'security-setup');
      await page.getByLabel('Code from the app').fill('000000');
      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      await page.locator('[aria-invalid="true"]').waitFor();
      await page.getByLabel('Code from the app').fill(totp(secret));
      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      const list = page.getByRole('list', { name: 'Recovery codes' });
      await list.waitFor();
      const codes = (await list.getByRole('listitem').allInnerTexts()).map((c) => c.trim());
      assert.equal(codes.length, 10);
      await screen(page, 'security-recovery-codes');
      await page.getByRole('button', { name: 'I have saved them' }).click();
      await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).waitFor();
      await page.getByRole('table', { name: 'Your sessions' }).getByText('(this session)').waitFor();
      assert.equal(env.db(`SELECT totp_enabled_at IS NOT NULL FROM users WHERE id = '${ann.userId}'`), 't');

      // The password alone no longer signs in; the next step's code does
      // (the code that turned it on is used, and one step of drift is fine).
      await logOut(page);
      await password(page, ann);
      await screen(page, 'login-second-step');
      await page.getByLabel('Authentication code').fill('123456');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('alert').waitFor();
      await page.getByLabel('Authentication code').fill(totp(secret, 1));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('button', { name: /account menu/ }).waitFor();

      // A recovery code signs in once.
      await logOut(page);
      await password(page, ann);
      await page.getByRole('button', { name: 'Use a recovery code' }).click();
      await page.getByLabel('Recovery code').fill(codes[0]);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('button', { name: /account menu/ }).waitFor();
      assert.equal(env.db(`SELECT count(*) FROM recovery_codes WHERE user_id = '${ann.userId}' AND used_at IS NOT NULL`), '1');

      // A read key that expires, made on the Team screen, shows both.
      await page.getByRole('link', { name: 'Team' }).click();
      await page.getByRole('button', { name: 'New API key' }).click();
      await page.getByLabel('Key name').fill('Reporting');
      await page.getByLabel('Scope').selectOption('read');
      const next = new Date(Date.now() + 30 * 86400000).toISOString().slice(0, 10);
      await page.getByLabel('Expires on').fill(next);
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('button', { name: 'Done' }).click();
      const row = page.getByRole('row', { name: /Reporting/ });
      await row.getByText('Read only').waitFor();
      assert.equal(env.db(`SELECT scope || ' ' || (expires_at > now()) FROM api_keys WHERE name = 'Reporting' AND team_id = '${ann.teamId}'`), 'read true');

      // The audit log shows it, with its filters.
      await page.getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();
      const entries = page.getByRole('table', { name: /Audit log entries/ });
      await entries.getByText('api_key.created').waitFor();
      await entries.getByText('book.created').waitFor();
      await page.getByLabel('Action').selectOption('api_key.created');
      await entries.getByText('book.created').waitFor({ state: 'detached' });
      await entries.getByText('api_key.created').waitFor();
      assert.match(await entries.innerText(), /Reporting/);
      await screen(page, 'audit-log');
      await page.done();
    });

    test('a team that requires two-factor sign-in sends a member to Security', async (t) => {
      const owner = await env.signup('Owner');
      const setup = await env.api('POST', '/api/auth/2fa/setup', { token: owner.token });
      await env.api('POST', '/api/auth/2fa/enable', { token: owner.token, body: { code: totp(setup.data.secret) } });
      await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Shared' } });
      const member = await env.member(owner, 'member', 'Mia');
      await env.api('PATCH', `/api/teams/${owner.teamId}`, { token: owner.token, body: { require_two_factor: true } });

      const page = await env.page(t);
      await page.goto('/app/login');
      await page.getByLabel('Email').fill(member.email);
      await page.getByLabel('Password').fill(member.password);
      await page.getByRole('button', { name: 'Log in' }).click();
      const banner = page.getByRole('alert').filter({ hasText: 'requires two-factor sign-in' });
      await banner.waitFor();
      await screen(page, 'two-factor-required');
      await banner.getByRole('link', { name: 'Turn it on' }).click();
      await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      const secret = await page.getByLabel('Setup key').inputValue();
      await page.getByLabel('Code from the app').fill(totp(secret));
      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      await page.getByRole('button', { name: 'I have saved them' }).click();
      // The team's books open: the switcher offers the book.
      await page.getByRole('combobox', { name: 'Book' }).locator('option', { hasText: 'Shared' }).waitFor({ state: 'attached' });
      await page.getByRole('link', { name: 'Contacts' }).click();
      await page.getByRole('heading', { name: 'Shared' }).waitFor();
      await page.getByText('This book has no contacts yet').waitFor();
      await page.done();
    });

    test('an owner without two-factor sign-in is told it will hold them too before requiring it', async (t) => {
      const owner = await env.signup('Otto');
      await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name: 'Held' } });
      const page = await env.page(t);
      await login(page, owner, '/app/team');
      await page.getByRole('button', { name: 'Require two-factor sign-in' }).click();
      const d = page.getByRole('dialog', { name: 'Require two-factor sign-in of everyone, you included?' });
      await d.getByText('you too are kept out of the team').waitFor();
      await screen(page, 'require-two-factor-unprotected');
      await d.getByRole('button', { name: 'Require it' }).click();
      await page.getByRole('alert').filter({ hasText: 'requires two-factor sign-in' }).waitFor();
      assert.equal(env.db(`SELECT require_two_factor FROM teams WHERE id = '${owner.teamId}'`), 't');
      await page.done();
    });
  });
