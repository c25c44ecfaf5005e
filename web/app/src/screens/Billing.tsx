// Billing: the Campaigns add-on of the team (its state, the trial, buying
// it through the payment provider's checkout) and the message of the
// checkout's return (the provider sends the browser back to the service's
// return page, which links here with ?checkout=success or cancel).
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, errorText, ok, type Schemas } from '../api/client';
import { addonNames } from '../lib/addon';
import { atLeast, needs } from '../lib/roles';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { Notice, Page } from '../ui/Page';

type Team = Schemas['Team'];

export default function Billing() {
  const w = useWorkspace();
  const { query } = useLocation();
  const [notice, setNotice] = useState('');
  const [buying, setBuying] = useState(false);
  const isAdmin = atLeast(w.role, 'admin');
  const path = { params: { path: { team_id: w.team.id } } };
  const returned = query.checkout === 'success' ? 'success' : query.checkout === 'cancel' ? 'cancel' : '';
  const { data: team, error, set: setTeam, reload } = useResource<Team>((signal) => ok(api.GET('/api/teams/{team_id}', { ...path, signal })).then((r) => r.data), [w.team.id, returned]);
  // Back from a paid checkout, the add-on turns on when the provider's
  // event arrives, usually within seconds: look again each second until it
  // has (30 times at most); a failed look stops looking.
  const looks = useRef(0);
  useEffect(() => {
    if (returned !== 'success' || !team || team.campaign_addon === 'active' || looks.current >= 30) return;
    const timer = setTimeout(() => {
      looks.current++;
      void reload();
    }, 1000);
    return () => clearTimeout(timer);
  }, [team, returned]);

  return (
    <Page title="Billing">
      {returned === 'success' && (
        <p role="status" class="notice">
          {team?.campaign_addon === 'active' ? 'Payment received: the Campaigns add-on is active.' : 'Payment received. The add-on turns on as soon as the payment provider confirms it…'}
        </p>
      )}
      {returned === 'cancel' && <p class="notice">Checkout cancelled: nothing was charged.</p>}
      <Notice message={notice} />
      {error && <p role="alert">{error}</p>}
      {!team ? (
        !error && <p>Loading…</p>
      ) : (
        <>
          <h2>Campaigns add-on</h2>
          <p>Multi-step email campaigns, their reports, delivery feedback from SendGrid and the suppression list. A 14-day trial is free; after it, the add-on is a monthly or yearly subscription.</p>
          <dl class="facts">
            <div>
              <dt>State</dt>
              <dd>
                {addonNames[team.campaign_addon]}
                {team.campaign_addon === 'trial' && team.trial_ends_at && ` until ${new Date(team.trial_ends_at).toLocaleDateString()}`}
              </dd>
            </div>
          </dl>
          {isAdmin ? (
            <div class="actions">
              {team.campaign_addon === 'none' && (
                <button
                  type="button"
                  onClick={async () => {
                    try {
                      setTeam((await ok(api.POST('/api/teams/{team_id}/addons/campaigns/trial', path))).data);
                      setNotice('The 14-day trial of the Campaigns add-on has started.');
                    } catch (e) {
                      setNotice(errorText(e));
                    }
                  }}
                >
                  Start the 14-day trial
                </button>
              )}
              {team.campaign_addon !== 'active' && (
                <button type="button" class={team.campaign_addon === 'none' ? 'secondary' : undefined} onClick={() => setBuying(true)}>
                  Buy the add-on
                </button>
              )}
              {team.campaign_addon === 'active' && <p>The subscription renews by itself; the payment provider emails its receipts.</p>}
            </div>
          ) : (
            team.campaign_addon !== 'active' && (
              <p class="hint">
                {needs('admin')} {team.campaign_addon === 'none' ? 'Admins start the trial or buy the add-on.' : 'Admins buy the add-on.'}
              </p>
            )
          )}
        </>
      )}
      {buying && <BuyAddon onClose={() => setBuying(false)} />}
    </Page>
  );
}

type Plan = Schemas['CheckoutInput']['plan'];
type Currency = Schemas['CheckoutInput']['currency'];
const planNames: Record<Plan, string> = { monthly: 'Monthly', yearly: 'Yearly' };
const currencyNames: Record<Currency, string> = { usd: 'US dollars (USD)', eur: 'Euros (EUR)', gbp: 'Pounds sterling (GBP)' };

/**
 * BuyAddon starts the payment provider's checkout of the paid add-on and
 * sends the browser there; the provider's webhook turns the add-on on, so
 * nothing changes here until the payment is done.
 */
function BuyAddon({ onClose }: { onClose: () => void }) {
  const w = useWorkspace();
  const f = useForm({ plan: 'monthly' as Plan, currency: 'usd' as Currency });
  return (
    <FormDialog
      title="Buy the Campaigns add-on"
      submit="Continue to payment"
      form={f}
      checks={() => ({})}
      send={async () => {
        const r = await ok(api.POST('/api/payments/create-campaign-checkout', { body: { ...f.values, team_id: w.team.id } }));
        window.location.assign(r.data.url);
      }}
      onClose={onClose}
    >
      <p>The payment provider’s checkout page opens next; the add-on turns on once the payment is through.</p>
      <Field label="Plan" as="select" {...f.bind('plan')}>
        {(Object.keys(planNames) as Plan[]).map((p) => (
          <option value={p}>{planNames[p]}</option>
        ))}
      </Field>
      <Field label="Currency" as="select" {...f.bind('currency')}>
        {(Object.keys(currencyNames) as Currency[]).map((c) => (
          <option value={c}>{currencyNames[c]}</option>
        ))}
      </Field>
    </FormDialog>
  );
}

