// The browser suite's harness: the real binary on a fresh database of the
// local PostgreSQL, its account emails sent to a fake SendGrid, its add-on
// checkouts to a fake Stripe, headless Debian chromium driven by
// playwright-core, axe-core on every screen, a screenshot of every screen
// under .data/screenshots/, and a check that nothing broke the CSP.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHTTPServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..', '..');
const screenshots = join(repo, '.data', 'screenshots');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** psql runs SQL against a database URL and returns the unaligned output. */
export function psql(url, sql) {
  return execFileSync('psql', [url, '-qAtX', '-v', 'ON_ERROR_STOP=1', '-c', sql], { encoding: 'utf8' }).trim();
}

const mailerKey = 'SG.browser-tests';

/**
 * fakeSendGrid is a SendGrid v3 `/v3/mail/send` endpoint: it records every
 * message (recipient, subject, text and HTML parts) and answers 202, as
 * SendGrid does. A request without the configured key is answered 401.
 */
async function fakeSendGrid() {
  const messages = [];
  const server = createHTTPServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v3/scopes') {
        // What verifying the key asks: the key's permissions.
        const okKey = req.headers.authorization === `Bearer ${mailerKey}`;
        res.writeHead(okKey ? 200 : 401, { 'Content-Type': 'application/json' }).end(okKey ? '{"scopes":["mail.send"]}' : '{"errors":[{"message":"authorization required"}]}');
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v3/mail/send') {
        res.writeHead(404).end();
        return;
      }
      if (req.headers.authorization !== `Bearer ${mailerKey}`) {
        res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"errors":[{"message":"The provided authorization grant is invalid"}]}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const part = (type) => body.content?.find((c) => c.type === type)?.value ?? '';
      const messageId = `fake${messages.length + 1}`;
      for (const p of body.personalizations ?? []) {
        // SendGrid replaces each personalization's substitution keys in the content.
        const sub = (v) => Object.entries(p.substitutions ?? {}).reduce((out, [k, x]) => out.split(k).join(x), v);
        for (const to of p.to ?? []) {
          messages.push({
            to: to.email.toLowerCase(),
            subject: sub(p.subject ?? body.subject),
            text: sub(part('text/plain')),
            html: sub(part('text/html')),
            from: body.from?.email,
            // What the provider's events about this message carry back.
            customArgs: { ...body.custom_args, ...p.custom_args },
            messageId,
            taken: false,
          });
        }
      }
      res.writeHead(202, { 'X-Message-Id': messageId }).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { messages, url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

const stripeKey = 'sk_test_browser';
const stripeWebhookSecret = 'whsec_browser_tests';

/**
 * fakeStripe plays the payment provider: `POST /v1/checkout/sessions`
 * (form-encoded, as Stripe's API) records the session and answers it with
 * the address of its own payment page; paying there sends the service a
 * signed `checkout.session.completed` event, as Stripe does, and returns
 * the browser to the session's success address.
 */
async function fakeStripe() {
  const sessions = [];
  let webhookURL = '';
  const server = createHTTPServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const path = new URL(req.url, 'http://x').pathname;
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        if (req.headers.authorization !== `Bearer ${stripeKey}`) {
          res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}');
          return;
        }
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        const id = `cs_test_${sessions.length + 1}`;
        const session = {
          id,
          object: 'checkout.session',
          mode: form.get('mode'),
          client_reference_id: form.get('client_reference_id'),
          metadata: { team_id: form.get('metadata[team_id]'), plan: form.get('metadata[plan]') },
          price: form.get('line_items[0][price]'),
          success_url: form.get('success_url'),
          cancel_url: form.get('cancel_url'),
          url: `http://127.0.0.1:${server.address().port}/c/pay/${id}`,
          status: 'open',
          payment_status: 'unpaid',
        };
        sessions.push(session);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(session));
        return;
      }
      const session = sessions.find((s) => path === `/c/pay/${s.id}`);
      if (session && req.method === 'GET') {
        res
          .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
          .end(`<!doctype html><html lang="en"><title>Fake checkout</title><h1>Pay for ${session.price}</h1><form method="post"><button>Pay</button></form></html>`);
        return;
      }
      if (session && req.method === 'POST') {
        const created = Math.floor(Date.now() / 1000);
        const payload = JSON.stringify({
          id: `evt_${session.id}`,
          object: 'event',
          type: 'checkout.session.completed',
          created,
          api_version: '2023-10-16',
          data: { object: { ...session, status: 'complete', payment_status: 'paid', customer: 'cus_browser', subscription: `sub_${session.id}` } },
        });
        const v1 = createHmac('sha256', stripeWebhookSecret).update(`${created}.${payload}`).digest('hex');
        const r = await fetch(webhookURL, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Stripe-Signature': `t=${created},v1=${v1}` }, body: payload });
        session.webhookStatus = r.status;
        res.writeHead(303, { Location: session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id) }).end();
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    sessions,
    url: `http://127.0.0.1:${server.address().port}`,
    deliverTo: (u) => (webhookURL = u),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** eventSigner is an ECDSA P-256 key pair, as a SendGrid account's Event Webhook signing key. */
function eventSigner() {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    sign: (payload) => sign('sha256', Buffer.from(payload), privateKey).toString('base64'),
  };
}

/**
 * startMailFakes runs the Go test servers of internal/mailer/mailertest
 * (an SMTP relay with STARTTLS and AUTH, a fake SES checking SigV4) as a
 * process, and returns where they are; null when MAILFAKES_BIN is unset.
 */
async function startMailFakes() {
  const bin = process.env.MAILFAKES_BIN;
  if (!bin) return null;
  const proc = spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (c) => {
      buf += c;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(buf.slice(0, nl));
    });
    proc.once('exit', () => reject(new Error('mailfakes exited')));
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  return { ...JSON.parse(line), close: () => (proc.stdin.end(), exited) };
}

let shared = null;
/**
 * start gives every suite the same service (on its own new database) and
 * browser, launched on first use; suites keep apart by signing up their own
 * accounts and teams. stopAll ends them.
 */
export function start() {
  shared ??= launch();
  return shared;
}

export async function stopAll() {
  if (shared) await (await shared).stop();
}

async function launch() {
  const bin = process.env.CONTACTBOOK_BIN;
  assert.ok(bin, 'CONTACTBOOK_BIN is not set; run the suite with `npm run test:browser`');
  const admin = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  const name = `contactbook_web_${process.pid}_${Date.now()}`;
  admin.pathname = '/postgres';
  psql(admin.href, `CREATE DATABASE ${name}`);
  const dbURL = new URL(admin.href);
  dbURL.pathname = '/' + name;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const tmp = mkdtempSync(join(tmpdir(), 'contactbook-web-'));
  const sendgrid = await fakeSendGrid();
  const mailFakes = await startMailFakes();
  const stripe = await fakeStripe();
  stripe.deliverTo(`${url}/api/payments/webhook`);
  const proc = spawn(bin, ['serve'], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: dbURL.href,
      HTTP_ADDR: `127.0.0.1:${port}`,
      PUBLIC_BASE_URL: url,
      JWT_SECRET: 'browser-tests-secret-0123456789abcdef',
      PASSWORD_HASH_COST: '4',
      AUTO_MIGRATE: 'true',
      WEBHOOK_ALLOW_INSECURE: 'true',
      IMAGES_DIR: tmp,
      MAILER_BASE_URL: sendgrid.url,
      SYSTEM_MAILER_API_KEY: mailerKey,
      SYSTEM_SENDER_EMAIL: 'accounts@contactbook.test',
      SYSTEM_SENDER_NAME: 'contactbook',
      STRIPE_SECRET_KEY: stripeKey,
      STRIPE_WEBHOOK_SECRET: stripeWebhookSecret,
      STRIPE_API_BASE: stripe.url,
      LOG_LEVEL: 'error',
      LOG_FORMAT: 'text',
      ...(mailFakes ? { MAIL_CA_FILE: mailFakes.ca_file, SES_ENDPOINT: mailFakes.ses.url } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(url + '/readyz')).ok) break;
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null || i > 300) throw new Error('the service did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  mkdirSync(screenshots, { recursive: true });
  const env = {
    url,
    db: (sql) => psql(dbURL.href, sql),
    /** checkouts are the checkout sessions the fake payment provider was asked for. */
    checkouts: stripe.sessions,
    /** mailFakes are the SMTP relay and SES the service trusts: {smtp: {host, port, username, password}, ses: {url, region, access_key_id, secret_access_key}}; null without MAILFAKES_BIN. */
    mailFakes,
    /** mails are the messages the fake SendGrid received, one per recipient. */
    mails: sendgrid.messages,
    mailerKey,
    /** eventKey is the key pair a book's provider events are signed with (public: base64 DER, for the email settings). */
    eventKey: eventSigner(),
    browser,
    async stop() {
      await browser.close();
      proc.kill('SIGTERM');
      await exited;
      await sendgrid.close();
      await mailFakes?.close();
      await stripe.close();
      psql(admin.href, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(tmp, { recursive: true, force: true });
    },
    /**
     * providerEvents posts a batch of SendGrid Event Webhook events about
     * received messages to the book's intake, signed as SendGrid signs
     * them; each event is [message, kind, extra fields].
     */
    async providerEvents(bookId, events) {
      const now = Math.floor(Date.now() / 1000);
      const batch = events.map(([m, kind, extra], i) => ({
        email: m.to,
        event: kind,
        timestamp: now + 1 + i, // after the send (whole seconds), in the order given
        sg_event_id: `ev-${now}-${i}-${Math.random().toString(36).slice(2)}`,
        sg_message_id: `${m.messageId}.filter0001`,
        ...m.customArgs,
        ...extra,
      }));
      const body = JSON.stringify(batch) + '\r\n';
      const ts = String(now);
      const r = await fetch(`${url}/api/mailer/events/${bookId}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Twilio-Email-Event-Webhook-Signature': env.eventKey.sign(ts + body),
          'X-Twilio-Email-Event-Webhook-Timestamp': ts,
        },
        body,
      });
      const text = await r.text();
      if (!r.ok) throw new Error(`provider events: ${r.status} ${text}`);
      return JSON.parse(text);
    },
    /** mailTo waits for a message to the address (case-insensitive) and returns it. */
    async mailTo(to, waitMs = 30000) {
      for (const end = Date.now() + waitMs; Date.now() < end; ) {
        const m = sendgrid.messages.find((m) => m.to === to.toLowerCase() && m.customArgs && Object.keys(m.customArgs).length);
        if (m) return m;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no campaign email to ${to} arrived`);
    },
    /** api calls /api as a script would (seeding); returns the parsed body. */
    async api(method, path, { token, body, book } = {}) {
      const headers = { Accept: 'application/json' };
      if (token) headers.Authorization = `Bearer ${token}`;
      if (book) headers['X-Book-ID'] = book;
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      const r = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await r.text();
      const json = text ? JSON.parse(text) : null;
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
      return json;
    },
    /**
     * campaignBook gives owner's team the Campaigns add-on in the state
     * addon, creates a book named name and sets up its email settings (a
     * sender named after the book, the company address, the fake
     * provider's key; settings adds or overrides fields). It returns the
     * book's id and `as`, which calls the API as owner in that book.
     */
    async campaignBook(owner, name, { addon = 'trial', settings = {} } = {}) {
      env.db(`UPDATE teams SET campaign_addon = '${addon}' WHERE id = '${owner.teamId}'`);
      const book = (await env.api('POST', '/api/books', { token: owner.token, body: { team_id: owner.teamId, name } })).data.id;
      const as = (method, path, body) => env.api(method, path, { token: owner.token, body, book });
      await as('PUT', '/api/campaign-settings', {
        sender_name: name, sender_email: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '.')}@acme.example`,
        company_name: 'Acme Inc.', address_line1: '1 Main St', city: 'Springfield', country: 'USA', mailer_api_key: mailerKey,
        ...settings,
      });
      return { book, as };
    },
    /** signup creates an account (owner of its own team) through the API. */
    async signup(name) {
      const n = `${name}-${Math.random().toString(36).slice(2, 8)}`;
      const email = `${n}@example.com`;
      const password = 'correct horse battery';
      const r = await env.api('POST', '/api/auth/signup', { body: { email, password, name, team_name: `${name}'s team` } });
      return { email, password, name, token: r.data.token, userId: r.data.user.id, teamId: r.data.team.id };
    },
    /**
     * link waits for an email to `to` (case-insensitive) that the fake
     * SendGrid received and not handed out before, holding a link to the
     * app's `path`; it returns that link, checked to be in both the text
     * and the HTML part. It gives up after waitMs: the email is a
     * background job, which waits for a free worker when the machine is
     * busy (CI runs the Go tests beside these), as mailTo does.
     */
    async link(to, path, waitMs = 30000) {
      const pattern = new RegExp(`${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${path}\\?token=[A-Za-z0-9_%-]+`);
      for (const end = Date.now() + waitMs; Date.now() < end; ) {
        const m = sendgrid.messages.find((m) => !m.taken && m.to === to.toLowerCase() && pattern.test(m.text));
        if (m) {
          m.taken = true;
          const link = pattern.exec(m.text)[0];
          assert.ok(m.html.includes(link), `the HTML part holds the link ${link}`);
          assert.equal(m.from, 'accounts@contactbook.test');
          return link;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no email to ${to} with a link to ${path} arrived`);
    },
    /**
     * invite has inviter (signed up through the API) invite the address
     * with the role; it returns the invitation token from the email.
     */
    async invite(inviter, email, role) {
      await env.api('POST', `/api/teams/${inviter.teamId}/invitations`, { token: inviter.token, body: { email, role } });
      return new URL(await env.link(email, '/app/invitations/accept')).searchParams.get('token');
    },
    /** join has an existing account (user) accept inviter's invitation with the role. */
    async join(inviter, user, role) {
      const token = await env.invite(inviter, user.email, role);
      await env.api('POST', '/api/invitations/accept', { token: user.token, body: { token } });
    },
    /**
     * member brings a new person into inviter's team with the role, the way
     * people join: an invitation, its link from the email, and an account
     * created from it (no team of its own).
     */
    async member(inviter, role, name = role) {
      const n = `${name}-${Math.random().toString(36).slice(2, 8)}`;
      const email = `${n}@example.com`;
      const password = 'correct horse battery';
      const token = await env.invite(inviter, email, role);
      const r = await env.api('POST', '/api/invitations/accept', { body: { token, name, password } });
      const me = await env.api('GET', '/api/me', { token: r.data.token });
      return { email, password, name, token: r.data.token, userId: me.data.user.id, teamId: inviter.teamId };
    },
    /**
     * page opens a fresh browser context (its own storage) and a page in
     * it for test t. A page the test leaves open (it failed before
     * page.done()) is photographed as failed-<test>.png and closed.
     */
    async page(t) {
      const context = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      // Generous: make test runs these beside the Go tests on two cores,
      // where a screen can take seconds to answer; a missing element still
      // fails, only later.
      page.setDefaultTimeout(30000);
      const problems = [];
      page.on('console', (m) => {
        if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      let closed = false;
      t.after(async () => {
        if (closed) return;
        const file = join(screenshots, `failed-${t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.png`);
        await page.screenshot({ path: file, fullPage: true }).catch(() => {});
        console.log(`screenshot of the failed test's page: ${file}`);
        await context.close();
      });
      page.done = async () => {
        closed = true;
        assert.deepEqual(problems, [], 'the page logged errors (CSP violations included)');
        await context.close();
      };
      return page;
    },
  };
  return env;
}

/** login signs in through the login screen and waits for the app. */
export async function login(page, user, path = '/app/') {
  await page.goto(path);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: `${user.name} — account menu` }).waitFor();
  // The app then moves on to the screen (from /app/, once the books are
  // known), whose heading takes focus; until then a menu opened would close
  // as focus leaves it, so the screen must have settled first.
  await page.waitForFunction(() => location.pathname !== '/app/' && document.activeElement?.tagName === 'H1');
}

/**
 * screen checks a screen with axe-core (no serious or critical violation)
 * and keeps its screenshot as <name>.png.
 */
export async function screen(page, name) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
  assert.deepEqual(violations, [], `axe-core on ${name}`);
}

/** seedContacts adds n contacts to a book in one statement. */
export function seedContacts(env, bookId, n, prefix = 'Person') {
  env.db(`INSERT INTO contacts (book_id, first_name, last_name, company, emails, created_at)
    SELECT '${bookId}', '${prefix}', lpad(i::text, 6, '0'), 'Company ' || (i % 50),
      jsonb_build_array(jsonb_build_object('address', lower('${prefix}') || i || '@example.com', 'label', 'work', 'primary', true)),
      now() - i * interval '1 second'
    FROM generate_series(1, ${n}) i`);
}
