// A campaign's report: per step, how many emails were sent, delivered,
// opened, clicked, bounced, marked as spam and failed, and how many
// participants skipped the step (its condition) or wait for it (its send
// window or A/B test), as a chart and a table; each number opens the
// contacts behind it. A/B steps show each subject's counts and the winner.
import { useState } from 'preact/hooks';
import { api, inBook, ok, type Schemas } from '../api/client';
import type { StepContactResult } from '../api/enums';
import { useCampaign } from '../lib/campaign';
import { pageCount } from '../lib/contactsView';
import { useList } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { CampaignTabs } from '../ui/CampaignTabs';
import { DataTable } from '../ui/DataTable';
import { Dialog } from '../ui/Dialog';
import { Page } from '../ui/Page';
import { Pager } from '../ui/Pager';

type StepStats = Schemas['Stats']['steps'][number];
type Result = StepContactResult;

const metrics: { key: Result; name: string; count: (s: StepStats) => number }[] = [
  { key: 'success', name: 'Sent', count: (s) => s.success_count },
  { key: 'delivered', name: 'Delivered', count: (s) => s.delivered_count },
  { key: 'opened', name: 'Opened', count: (s) => s.opened_count },
  { key: 'clicked', name: 'Clicked', count: (s) => s.clicked_count },
  { key: 'bounced', name: 'Bounced', count: (s) => s.bounced_count },
  { key: 'complained', name: 'Spam reports', count: (s) => s.complained_count },
  { key: 'failed', name: 'Failed', count: (s) => s.failed_count },
  { key: 'skipped', name: 'Skipped', count: (s) => s.skipped_count },
];

export default function CampaignReport({ book: bookId, id }: { book: string; id: string }) {
  const { campaign, error } = useCampaign(bookId, id);
  const [shown, setShown] = useState<{ step: StepStats; metric: (typeof metrics)[number] } | null>(null);
  const stats = useResource((signal) => ok(api.GET('/api/campaigns/{id}/stats', { params: { header: inBook(bookId), path: { id } }, signal })).then((r) => r.data), [id], { keep: true });
  if (!campaign) return <Page title="Campaign report">{error ? <p role="alert">{error}</p> : <p>Loading…</p>}</Page>;
  const st = stats.data;
  return (
    <Page title={`Report of ${campaign.name}`}>
      <p>
        <a href={`/app/books/${bookId}/campaigns`}>Back to the campaigns</a>
      </p>
      <CampaignTabs book={bookId} id={id} current="report" />
      {stats.error && <p role="alert">{stats.error}</p>}
      {st && (
        <>
          <dl class="figures">
            <div>
              <dt>Participants</dt>
              <dd>{st.summary.total_participants.toLocaleString('en')}</dd>
            </div>
            <div>
              <dt>In progress</dt>
              <dd>{st.summary.active_count.toLocaleString('en')}</dd>
            </div>
            <div>
              <dt>Through the whole sequence</dt>
              <dd>{st.summary.completed_count.toLocaleString('en')}</dd>
            </div>
            <div>
              <dt>Waiting</dt>
              <dd>{st.summary.waiting_count.toLocaleString('en')}</dd>
            </div>
          </dl>
          <StepChart steps={st.steps} />
          <DataTable<StepStats>
            caption="Each step's emails and what became of them"
            rows={st.steps}
            rowKey={(s) => s.step_id}
            empty="The campaign has no step."
            columns={[
              { key: 'step', header: 'Step', cell: (s) => `${s.sort_order + 1}. ${s.step_name}` },
              ...metrics.map((m) => ({
                key: m.key,
                header: m.name,
                cell: (s: StepStats) =>
                  m.count(s) > 0 ? (
                    <button type="button" class="link" aria-label={`${m.count(s).toLocaleString('en')}: the contacts of ${s.step_name}, ${m.name.toLowerCase()}`} onClick={() => setShown({ step: s, metric: m })}>
                      {m.count(s).toLocaleString('en')}
                    </button>
                  ) : (
                    '0'
                  ),
              })),
              { key: 'waiting', header: 'Waiting', cell: (s) => s.waiting_count.toLocaleString('en') },
            ]}
          />
          {st.steps
            .filter((s) => s.variants?.length)
            .map((s) => (
              <VariantTable step={s} />
            ))}
        </>
      )}
      {shown && <StepContacts bookId={bookId} campaignId={id} step={shown.step} metric={shown.metric} onClose={() => setShown(null)} />}
    </Page>
  );
}

type VariantStats = NonNullable<StepStats['variants']>[number];

/** VariantTable shows an A/B step's subjects side by side, the winner marked. */
function VariantTable({ step }: { step: StepStats }) {
  const rate = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)} %` : '—');
  const decided = step.variants?.some((v) => v.winner);
  return (
    <DataTable<VariantStats>
      caption={`A/B subjects of ${step.step_name}${decided ? '' : ': the test is not decided yet'}`}
      rows={step.variants ?? []}
      rowKey={(v) => v.id}
      empty="No subject."
      columns={[
        { key: 'subject', header: 'Subject', cell: (v) => v.subject },
        { key: 'sent', header: 'Sent', cell: (v) => v.sent_count.toLocaleString('en') },
        { key: 'opened', header: 'Opened', cell: (v) => `${v.opened_count.toLocaleString('en')} (${rate(v.opened_count, v.sent_count)})` },
        { key: 'clicked', header: 'Clicked', cell: (v) => `${v.clicked_count.toLocaleString('en')} (${rate(v.clicked_count, v.sent_count)})` },
        { key: 'winner', header: 'Winner', cell: (v) => (v.winner ? 'Winner' : '') },
      ]}
    />
  );
}

/** StepChart draws each step's numbers as a group of bars; the table above it is its text. */
function StepChart({ steps }: { steps: StepStats[] }) {
  const top = Math.max(1, ...steps.flatMap((s) => metrics.map((m) => m.count(s))));
  const rowH = 14;
  const groupH = metrics.length * rowH + 16;
  const width = 720;
  const left = 160;
  const height = Math.max(groupH, steps.length * groupH);
  return (
    <figure class="chart step-chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Bars of each step's ${metrics.map((m) => m.name.toLowerCase()).join(', ')}; the table below holds the numbers.`}>
        {steps.map((s, i) => (
          <g transform={`translate(0 ${i * groupH})`}>
            <text x="0" y="12" class="step-name">
              {`${s.sort_order + 1}. ${s.step_name}`.slice(0, 24)}
            </text>
            {metrics.map((m, j) => (
              <g>
                <rect class={`bar m-${m.key}`} x={left} y={j * rowH + 2} height={rowH - 3} width={((width - left - 60) * m.count(s)) / top} />
                <text x={left + ((width - left - 60) * m.count(s)) / top + 4} y={j * rowH + 11}>
                  {`${m.name} ${m.count(s).toLocaleString('en')}`}
                </text>
              </g>
            ))}
          </g>
        ))}
      </svg>
    </figure>
  );
}

const pageSize = 20;

function StepContacts({ bookId, campaignId, step, metric, onClose }: { bookId: string; campaignId: string; step: StepStats; metric: (typeof metrics)[number]; onClose: () => void }) {
  const [page, setPage] = useState(1);
  const list = useList<Schemas['StepContact']>(
    (signal) =>
      ok(
        api.GET('/api/campaign-step-contacts/{id}/{sid}', {
          params: { header: inBook(bookId), path: { id: campaignId, sid: step.step_id }, query: { result: metric.key, page, limit: pageSize } },
          signal,
        }),
      ),
    `${step.step_id}/${metric.key}/${page}`,
  );
  return (
    <Dialog title={`${metric.name}: ${step.step_name}`} open onClose={onClose} closeText="Close">
      <DataTable
        caption={`Contacts of ${step.step_name}, ${metric.name.toLowerCase()}`}
        rows={list.rows}
        rowKey={(c) => c.id}
        loading={list.loading}
        error={list.error}
        empty="Nobody."
        columns={[
          { key: 'name', header: 'Contact', cell: (c) => <a href={`/app/contacts/${c.contact_id}`}>{c.contact_name || c.contact_email}</a> },
          { key: 'email', header: 'Email', cell: (c) => c.contact_email },
          { key: 'at', header: 'Step done', cell: (c) => new Date(c.completed_at).toLocaleString() },
          ...(metric.key === 'failed' || metric.key === 'skipped' ? [{ key: 'why', header: 'Why', cell: (c: Schemas['StepContact']) => c.result_detail }] : []),
        ]}
      />
      {list.total > pageSize && <Pager page={page} pages={pageCount(list.total, pageSize)} onPage={setPage} />}
    </Dialog>
  );
}
