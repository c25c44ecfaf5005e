// Billing: the Campaigns add-on's state, its trial, buying it through the
// payment provider's checkout and the way back, for each role.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { login, screen, start } from './harness.mjs';

export default () =>
  describe('Billing', { concurrency: 1 }, () => {
    let env, owner, admin, member;
    before(async () => {
      env = await start();
      owner = await env.signup('Owner');
      admin = await env.member(owner, 'admin', 'Adele');
      member = await env.member(owner, 'member', 'Mick');
    });
    const addon = () => env.db(`SELECT campaign_addon FROM teams WHERE id = '${owner.teamId}'`);

    test('a member sees the state and why they cannot change it', async (t) => {
      const page = await env.page(t);
      await login(page, member, '/app/team');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Billing' }).click();
      await page.getByRole('heading', { name: 'Billing' }).waitFor();
      await page.getByRole('definition').filter({ hasText: /^Not active$/ }).waitFor();
      await page.getByText('Needs the admin role or higher. Admins start the trial or buy the add-on.').waitFor();
      assert.equal(await page.getByRole('button', { name: /^(Start|Buy)/ }).count(), 0);
      await screen(page, 'billing-member');
      await page.done();
    });

    test('an owner starts the trial', async (t) => {
      const page = await env.page(t);
      await login(page, owner, '/app/billing');
      await page.getByRole('button', { name: 'Start the 14-day trial' }).click();
      await page.getByText('The 14-day trial of the Campaigns add-on has started.').waitFor();
      await page.getByRole('definition').filter({ hasText: /^Trial until/ }).waitFor();
      assert.equal(addon(), 'trial');
      assert.equal(await page.getByRole('button', { name: 'Start the 14-day trial' }).count(), 0);
      // The team screen shows the state in a line, with the way here.
      await page.goto('/app/team');
      await page.getByRole('definition').filter({ hasText: /^Trial until/ }).getByRole('link', { name: 'Billing' }).waitFor();
      await page.done();
    });

    test('an admin buys the add-on through the payment provider and comes back to it active', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/billing');
      await page.getByRole('button', { name: 'Buy the add-on' }).click();
      const dialog = page.getByRole('dialog', { name: 'Buy the Campaigns add-on' });
      await dialog.getByLabel('Plan').selectOption('yearly');
      await dialog.getByLabel('Currency').selectOption('eur');
      await screen(page, 'billing-buy-addon');
      await dialog.getByRole('button', { name: 'Continue to payment' }).click();
      // The browser is at the provider's payment page of a session for this team and plan.
      await page.getByRole('heading', { name: 'Pay for price_campaigns_yearly_eur' }).waitFor();
      const session = env.checkouts.at(-1);
      assert.equal(page.url(), session.url);
      assert.equal(session.mode, 'subscription');
      assert.equal(session.client_reference_id, owner.teamId);
      assert.equal(session.metadata.team_id, owner.teamId);
      await page.getByRole('button', { name: 'Pay' }).click();
      // The provider's signed event turned the add-on on; its return page leads back here.
      await page.getByRole('heading', { name: 'Thank you: payment received' }).waitFor();
      assert.equal(session.webhookStatus, 200);
      await page.getByRole('link', { name: 'Back to billing in the dashboard' }).click();
      await page.getByText('Payment received: the Campaigns add-on is active.').waitFor();
      await page.getByRole('definition').filter({ hasText: /^Active$/ }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Buy the add-on' }).count(), 0);
      assert.equal(addon(), 'active');
      await screen(page, 'billing-active');
      await page.done();
    });

    test('a cancelled checkout says nothing was charged', async (t) => {
      const page = await env.page(t);
      await login(page, admin, '/app/billing');
      await page.goto('/billing/cancel');
      await page.getByRole('heading', { name: 'Checkout cancelled' }).waitFor();
      await page.getByRole('link', { name: 'Back to billing in the dashboard' }).click();
      await page.getByText('Checkout cancelled: nothing was charged.').waitFor();
      await page.done();
    });
  });
