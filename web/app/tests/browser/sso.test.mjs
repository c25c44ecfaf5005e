// Single sign-on: the owner's settings screen (the redirect URI to copy,
// the provider saved after its discovery document was checked), and the
// login page's "Sign in with SSO": the address first, the redirect to the
// provider with state, nonce and PKCE, and what the page says when the
// provider sends the person back without signing them in.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

/**
 * provider is the front of an OpenID provider: its discovery document, and
 * an authorization endpoint that records what it was asked and sends the
 * browser back as a provider does when the person cancels.
 */
async function provider() {
  const asked = [];
  const server = createServer((req, res) => {
    const u = new URL(req.url, issuer);
    if (u.pathname === '/.well-known/openid-configuration') {
      res.setHeader('Content-Type', 'application/json');
      res.end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/keys`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        }),
      );
      return;
    }
    if (u.pathname === '/authorize') {
      asked.push(u.searchParams);
      const back = new URL(u.searchParams.get('redirect_uri'));
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('state', u.searchParams.get('state'));
      res.writeHead(302, { Location: back.href });
      res.end();
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  return { issuer, asked, close: () => server.close() };
}

export default () =>
  describe('Single sign-on', { concurrency: 1 }, () => {
    let env, owner, admin, idp;
    before(async () => {
      env = await start();
      idp = await provider();
      owner = await env.signup('Owner');
      admin = await env.member(owner, 'admin', 'Adele');
    });
    after(() => idp.close());

    test('an owner sets up single sign-on with the redirect URI to copy', async (t) => {
      const page = await env.page(t);
      await login(page, owner, '/app/team');
      await page.getByRole('link', { name: 'Single sign-on settings' }).click();
      await page.getByRole('heading', { name: 'Single sign-on' }).waitFor();
      assert.equal(await page.getByLabel('Redirect URI').inputValue(), `${env.url}/api/auth/sso/callback`);
      await page.getByLabel('Issuer URL').fill(`${idp.issuer}/wrong`);
      await page.getByLabel('Client ID').fill('contactbook');
      await page.getByLabel('Client secret').fill('secret-from-the-provider-WXYZ');
      await page.getByLabel('Email domains').fill('acme.example, sales.acme.example');
      await page.getByLabel('Default role').selectOption('viewer');
      await page.getByLabel('Groups claim').fill('groups');
      await page.getByLabel('Role map').fill('crm-admins = admin');
      await page.getByRole('button', { name: 'Save single sign-on' }).click();
      // The discovery document is checked: a wrong issuer is refused at its field.
      await page.getByText(/issuer has no usable discovery document/).waitFor();
      await page.getByLabel('Issuer URL').fill(idp.issuer);
      await page.getByRole('button', { name: 'Save single sign-on' }).click();
      await page.getByText('Single sign-on settings saved.').waitFor();
      assert.equal(await page.getByLabel('Client secret').inputValue(), '****WXYZ');
      await screen(page, 'team-sso');
      assert.equal(
        env.db(`SELECT default_role || ' ' || (role_map->>'crm-admins') || ' ' || enforce FROM sso_configs WHERE team_id = '${owner.teamId}'`),
        'viewer admin false',
      );
      assert.equal(env.db(`SELECT string_agg(domain, ',' ORDER BY domain) FROM sso_domains WHERE team_id = '${owner.teamId}'`), 'acme.example,sales.acme.example');

      // An admin is told it is the owner's.
      const other = await env.page(t);
      await login(other, admin, '/app/team/sso');
      await other.getByText(/Single sign-on lets the team sign in through its identity provider/).waitFor();
      assert.equal(await other.getByLabel('Issuer URL').count(), 0);
    });

    test('"Sign in with SSO" asks for the address, goes to the provider and shows why it came back', async (t) => {
      const page = await env.page(t);
      await page.goto('/app/login');
      await page.getByRole('button', { name: 'Sign in with SSO' }).click();
      await page.getByLabel('Work email').fill('ann@nowhere.example');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText(/No team signs in with single sign-on for this address/).waitFor();
      await screen(page, 'login-sso');

      await page.getByLabel('Work email').fill('ann@acme.example');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(/\/app\/login\?sso_error=provider$/);
      await page.getByText(/Single sign-on failed: Your identity provider did not sign you in/).waitFor();
      const q = idp.asked.at(-1);
      assert.equal(q.get('client_id'), 'contactbook');
      assert.equal(q.get('redirect_uri'), `${env.url}/api/auth/sso/callback`);
      assert.equal(q.get('code_challenge_method'), 'S256');
      assert.ok(q.get('state') && q.get('nonce') && q.get('code_challenge'));
      assert.equal(q.get('login_hint'), 'ann@acme.example');
      // No session came of it.
      assert.equal(await page.evaluate(() => document.cookie.includes('cb_csrf')), false);
      await screen(page, 'login-sso-error');

      // Each error code has its sentence.
      await page.goto('/app/login?sso_error=email_unverified');
      await page.getByText(/has not verified your email address/).waitFor();
    });
  });
