// A book's transactional emails (receipts, password links: what the team's
// systems send one at a time through POST /api/v1/transactional), newest
// first, with a status filter, and each message's detail: its recipient,
// what became of it and what the email provider reported.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, inBook, ok, type Schemas } from '../api/client';
import { useBook } from '../lib/useBook';
import { useResource } from '../lib/useResource';
import { DataTable, type Column } from '../ui/DataTable';
import { Dialog } from '../ui/Dialog';
import { Field } from '../ui/Field';
import { BookMissing, Page } from '../ui/Page';

type Message = Schemas['TransactionalMessage'];
type Status = Schemas['TransactionalStatus'];

export const statusNames: Record<Status, string> = {
  queued: 'Queued',
  sent: 'Sent',
  failed: 'Failed',
  suppressed: 'Suppressed',
};
const pageSize = 50;

export default function Transactional({ book: bookId }: { book: string }) {
  const { book, booksLoaded } = useBook(bookId);
  const { query, route, path } = useLocation();
  const [status, setStatus] = useState<Status | ''>('');
  // The cursors of the pages before the one shown: Newer goes back.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const list = useResource(
    (signal) =>
      ok(api.GET('/api/transactional', { params: { header: inBook(bookId), query: { status: status || undefined, limit: pageSize, cursor } }, signal })),
    [bookId, status, cursor],
    { keep: true },
  );
  const open = query.message ?? '';
  const show = (id: string) => route(`${path}?message=${id}`);
  if (!book) return <Page title="Transactional email"><BookMissing loaded={booksLoaded} /></Page>;
  const next = list.data?.meta.next_cursor ?? null;
  return (
    <Page title={`Transactional email of ${book.name}`}>
      <p class="hint">
        Emails your systems send one at a time (receipts, password links) with POST /api/v1/transactional: a template of this book with the request's data. They
        carry no unsubscribe link and an unsubscribe does not stop them; a bounced, complained, dropped or manually suppressed address does.
      </p>
      <div class="filters">
        <Field label="Status" as="select" value={status} onChange={(e) => (setStatus((e.target as HTMLSelectElement).value as Status | ''), setCursors([]))}>
          <option value="">Any status</option>
          {(Object.keys(statusNames) as Status[]).map((s) => (
            <option value={s}>{statusNames[s]}</option>
          ))}
        </Field>
      </div>
      <DataTable
        caption="Transactional emails"
        rows={list.data?.data ?? null}
        rowKey={(m) => m.id}
        loading={list.loading}
        error={list.error}
        empty={status ? 'No transactional email has this status.' : 'No transactional email was sent from this book yet.'}
        columns={
          [
            {
              key: 'to',
              header: 'To',
              cell: (m) => (
                <button type="button" class="link" onClick={() => show(m.id)}>
                  {m.to.name ? `${m.to.name} <${m.to.email}>` : m.to.email}
                </button>
              ),
            },
            { key: 'subject', header: 'Subject', cell: (m) => m.subject },
            { key: 'status', header: 'Status', cell: (m) => <span data-status={m.status}>{statusNames[m.status]}</span> },
            { key: 'at', header: 'Created', cell: (m) => new Date(m.created_at).toLocaleString() },
          ] as Column<Message>[]
        }
      />
      <div class="row">
        {cursors.length > 0 && (
          <button type="button" class="secondary" onClick={() => setCursors((c) => c.slice(0, -1))}>
            Newer
          </button>
        )}
        {next && (
          <button type="button" class="secondary" onClick={() => setCursors((c) => [...c, next])}>
            Older
          </button>
        )}
      </div>
      {open && <MessageDetail id={open} bookId={bookId} onClose={() => route(path)} />}
    </Page>
  );
}

function MessageDetail({ id, bookId, onClose }: { id: string; bookId: string; onClose: () => void }) {
  const m = useResource((signal) => ok(api.GET('/api/transactional/{id}', { params: { path: { id } }, signal })).then((r) => r.data), [id]);
  const d = m.data;
  const at = (t: string | null | undefined) => (t ? new Date(t).toLocaleString() : '—');
  return (
    <Dialog title="Transactional email" open onClose={onClose} closeText="Close">
      {m.error && <p role="alert">{m.error}</p>}
      {!d ? (
        <p class="state">Loading…</p>
      ) : (
        <>
          <dl class="facts">
            <dt>To</dt>
            <dd>
              {d.to.contact_id ? <a href={`/app/contacts/${d.to.contact_id}`}>{d.to.name || d.to.email}</a> : d.to.name || d.to.email} &lt;{d.to.email}&gt;
            </dd>
            <dt>Subject</dt>
            <dd>{d.subject}</dd>
            <dt>Status</dt>
            <dd data-status={d.status}>
              {statusNames[d.status]}
              {d.detail && `: ${d.detail}`}
            </dd>
            <dt>Template</dt>
            <dd>
              <a href={`/app/books/${bookId}/templates/${d.template_id}`}>Open the template</a>
            </dd>
            <dt>Created</dt>
            <dd>{at(d.created_at)}</dd>
            <dt>Sent</dt>
            <dd>{at(d.sent_at)}</dd>
            <dt>Delivered</dt>
            <dd>{at(d.delivered_at)}</dd>
            <dt>Opened</dt>
            <dd>{at(d.opened_at)}</dd>
            <dt>Clicked</dt>
            <dd>{at(d.clicked_at)}</dd>
            <dt>Bounced</dt>
            <dd>{at(d.bounced_at)}</dd>
            {d.provider_message_id && (
              <>
                <dt>Provider's message id</dt>
                <dd>
                  <code>{d.provider_message_id}</code>
                </dd>
              </>
            )}
          </dl>
          <h3>What the provider reported</h3>
          {d.events.length === 0 ? (
            <p class="state">Nothing yet.</p>
          ) : (
            <ol class="timeline" aria-label="Provider events">
              {d.events.map((e) => (
                <li data-kind={e.kind}>
                  <time dateTime={e.occurred_at}>{new Date(e.occurred_at).toLocaleString()}</time> {e.kind}
                  {e.detail && <span class="detail">: {e.detail}</span>}
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </Dialog>
  );
}
