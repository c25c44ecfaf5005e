// A book's deliverability (its rates over a chosen window, the daily
// complaint rate against the lines mailbox providers judge senders by) and
// its suppression list: the addresses campaign email must not reach, with
// search, a reason filter, adding by hand, lifting and a CSV export.
import { useState } from 'preact/hooks';
import { api, inBook, ok, type Schemas } from '../api/client';
import { checkRequired } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useForm } from '../lib/useForm';
import { useDebounced, useList } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { pageCount } from '../lib/contactsView';
import { Confirm } from '../ui/Confirm';
import { DataTable, type Column } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { BookMissing, Notice, Page } from '../ui/Page';
import { Pager } from '../ui/Pager';
import { ComplaintChart, percent } from '../ui/ComplaintChart';

type Suppression = Schemas['Suppression'];
type Reason = Suppression['reason'];

export const reasonNames: Record<Reason, string> = {
  unsubscribe: 'Unsubscribed',
  bounce: 'Bounced',
  complaint: 'Marked as spam',
  dropped: 'Dropped by the provider',
  manual: 'Added by hand',
};
const sourceNames: Record<Suppression['source'], string> = {
  unsubscribe_page: 'Unsubscribe page',
  provider: 'Email provider',
  api: 'API or dashboard',
  import: 'Import',
};
const windows = [7, 30, 90, 365];
const pageSize = 20;

export default function Suppressions({ book: bookId }: { book: string }) {
  const { book, booksLoaded } = useBook(bookId);
  if (!book) return <Page title="Suppressions"><BookMissing loaded={booksLoaded} /></Page>;
  return (
    <Page title={`Deliverability and suppressions of ${book.name}`}>
      <Deliverability bookId={bookId} />
      <SuppressionList bookId={bookId} />
    </Page>
  );
}

function Deliverability({ bookId }: { bookId: string }) {
  const [days, setDays] = useState(30);
  // The previous window's figures stay shown while another window loads.
  const { data: d, error, loading } = useResource((signal) => ok(api.GET('/api/deliverability', { params: { header: inBook(bookId), query: { days } }, signal })).then((r) => r.data), [bookId, days], {
    keep: true,
  });
  return (
    <section aria-labelledby="deliverability">
      <div class="section-head">
        <h2 id="deliverability">Deliverability</h2>
        <Field label="Window" as="select" value={String(days)} onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}>
          {windows.map((n) => (
            <option value={String(n)}>Last {n} days</option>
          ))}
        </Field>
      </div>
      {error && <p role="alert">{error}</p>}
      {!d ? (
        <p class="state">{loading ? 'Loading…' : ''}</p>
      ) : (
        <div aria-busy={loading || undefined}>
          <dl class="figures">
            <Figure name="Sent" value={d.sent} />
            <Figure name="Delivered" value={d.delivered} rate={d.delivery_rate} />
            <Figure name="Bounced" value={d.bounced} rate={d.bounce_rate} />
            <Figure name="Spam complaints" value={d.complained} rate={d.complaint_rate} />
            <Figure name="Unsubscribed" value={d.unsubscribed} />
            <Figure name="Opened" value={d.opened} rate={d.open_rate} />
            <Figure name="Clicked" value={d.clicked} rate={d.click_rate} />
          </dl>
          <p class={d.complaint_rate >= 0.003 ? 'verdict bad' : d.complaint_rate >= 0.001 ? 'verdict warn' : 'verdict'}>{verdict(d)}</p>
          <ComplaintChart days={d.daily} />
        </div>
      )}
    </section>
  );
}

function Figure({ name, value, rate }: { name: string; value: number; rate?: number }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd>
        {value.toLocaleString('en')}
        {rate !== undefined && <span class="rate"> ({percent(rate)})</span>}
      </dd>
    </div>
  );
}

function verdict(d: Schemas['Deliverability']): string {
  if (d.sent === 0) return `No campaign email was sent in the last ${d.days} days.`;
  const r = percent(d.complaint_rate);
  if (d.complaint_rate >= 0.003) return `The complaint rate, ${r}, is above 0.3 %: mailbox providers block senders at this rate. Send only to people who asked for your email, and make unsubscribing easy.`;
  if (d.complaint_rate >= 0.001) return `The complaint rate, ${r}, is above the 0.1 % mailbox providers expect; above 0.3 % they block the sender.`;
  return `The complaint rate, ${r}, is under the 0.1 % mailbox providers expect.`;
}

function SuppressionList({ bookId }: { bookId: string }) {
  const w = useWorkspace();
  const [q, setQ] = useState('');
  const [reason, setReason] = useState<Reason | ''>('');
  const [page, setPage] = useState(1);
  const [adding, setAdding] = useState(false);
  const [lifting, setLifting] = useState<Suppression | null>(null);
  const [notice, setNotice] = useState('');
  const query = useDebounced(q.trim(), 250);
  const list = useList<Suppression>(
    (signal) =>
      ok(
        api.GET('/api/suppressions', {
          params: { header: inBook(bookId), query: { q: query || undefined, reason: reason || undefined, page, limit: pageSize } },
          signal,
        }),
      ),
    `${bookId}/${query}/${reason}/${page}`,
  );
  const canAdd = atLeast(w.role, 'member');
  const canLift = atLeast(w.role, 'admin');
  const filters = new URLSearchParams();
  if (query) filters.set('q', query);
  if (reason) filters.set('reason', reason);
  const exportURL = `/api/books/${bookId}/suppressions/export${filters.size ? '?' + filters : ''}`;

  return (
    <section aria-labelledby="suppressions">
      <div class="section-head">
        <h2 id="suppressions">Suppressions</h2>
        <a class="button secondary" href={exportURL} download>
          Export CSV
        </a>
        {canAdd && (
          <button type="button" onClick={() => setAdding(true)}>
            Add suppression
          </button>
        )}
      </div>
      <p class="hint">
        Campaign email never reaches these addresses. Bounces, spam complaints and unsubscribes land here by themselves.
        {!canAdd && ` Adding one: ${needs('member')}`}
        {!canLift && ` Lifting one: ${needs('admin')}`}
      </p>
      <Notice message={notice} />
      <div class="filters">
        <Field label="Search suppressions" type="search" value={q} placeholder="Part of an address" onInput={(e) => (setQ((e.target as HTMLInputElement).value), setPage(1))} />
        <Field label="Reason" as="select" value={reason} onChange={(e) => (setReason((e.target as HTMLSelectElement).value as Reason | ''), setPage(1))}>
          <option value="">Any reason</option>
          {(Object.keys(reasonNames) as Reason[]).map((r) => (
            <option value={r}>{reasonNames[r]}</option>
          ))}
        </Field>
      </div>
      <DataTable
        caption="Suppressed addresses"
        rows={list.rows}
        rowKey={(s) => s.id}
        loading={list.loading}
        error={list.error}
        empty={query || reason ? 'No suppression matches.' : 'No address is suppressed.'}
        columns={(
          [
          { key: 'email', header: 'Email', cell: (s) => s.email ?? `Erased person (${s.email_hash.slice(0, 12)}…)` },
          { key: 'reason', header: 'Reason', cell: (s) => reasonNames[s.reason] },
          { key: 'source', header: 'Source', cell: (s) => sourceNames[s.source] },
          { key: 'at', header: 'Since', cell: (s) => new Date(s.created_at).toLocaleString() },
          {
            key: 'actions',
            header: 'Actions',
            cell: (s) => (
              <button type="button" class="secondary" aria-label={`Lift the suppression of ${s.email ?? 'an erased person'}`} onClick={() => setLifting(s)}>
                Lift
              </button>
            ),
          },
          ] as Column<Suppression>[]
        ).filter((c) => canLift || c.key !== 'actions')}
      />
      <Pager page={page} pages={pageCount(list.total, pageSize)} onPage={setPage} />
      {adding && (
        <AddSuppression
          bookId={bookId}
          onClose={() => setAdding(false)}
          onAdded={(s, created) => {
            setAdding(false);
            setNotice(created ? `${s.email} is suppressed.` : `${s.email} was already suppressed (${reasonNames[s.reason].toLowerCase()}).`);
            list.reload();
          }}
        />
      )}
      {lifting && (
        <Confirm
          title={`Lift the suppression of ${lifting.email ?? 'an erased person'}?`}
          button="Lift suppression"
          run={() => ok(api.DELETE('/api/suppressions/{id}', { params: { path: { id: lifting.id } } }))}
          onClose={() => setLifting(null)}
          onDone={() => {
            setNotice(`${lifting.email ?? 'The address'} can receive campaign email again.`);
            setLifting(null);
            list.reload();
          }}
        >
          <p>Campaign email will reach {lifting.email ?? 'the address'} again. The record of the suppression is kept, with who lifted it.</p>
        </Confirm>
      )}
    </section>
  );
}

function AddSuppression({ bookId, onClose, onAdded }: { bookId: string; onClose: () => void; onAdded: (s: Suppression, created: boolean) => void }) {
  const form = useForm({ email: '', reason: 'manual' as Reason });
  return (
    <FormDialog
      title="Add a suppression"
      submit="Add suppression"
      form={form}
      checks={() => ({ email: checkRequired(form.values.email, 'an email address') })}
      send={async () => {
        const r = await api.POST('/api/suppressions', { params: { header: inBook(bookId) }, body: { email: form.values.email.trim(), reason: form.values.reason } });
        const s = await ok(Promise.resolve(r));
        onAdded(s.data, r.response.status === 201);
      }}
      onClose={onClose}
    >
      <Field label="Email" type="email" autoComplete="off" {...form.bind('email')} />
      <Field label="Reason" as="select" value={form.values.reason} onChange={(e) => form.set('reason', (e.target as HTMLSelectElement).value as Reason)}>
        {(Object.keys(reasonNames) as Reason[]).map((r) => (
          <option value={r}>{reasonNames[r]}</option>
        ))}
      </Field>
    </FormDialog>
  );
}
