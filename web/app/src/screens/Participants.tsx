// A campaign's participants: enroll a whole label (a selection is enrolled
// from the contacts table), the list with each one's status, a
// participant's history, and removing one.
import { useState } from 'preact/hooks';
import { api, errorText, inBook, ok, type Schemas } from '../api/client';
import { useCampaign } from '../lib/campaign';
import { pageCount } from '../lib/contactsView';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useList } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { useSegments } from '../lib/useSegments';
import { useWorkspace } from '../lib/workspace';
import { CampaignTabs } from '../ui/CampaignTabs';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
import { Dialog } from '../ui/Dialog';
import { Field } from '../ui/Field';
import { Notice, Page } from '../ui/Page';
import { Pager } from '../ui/Pager';

type Participant = Schemas['Participant'];
const states: Record<Participant['status'], string> = { active: 'In progress', completed: 'Completed', removed: 'Removed' };
const pageSize = 50;

export default function Participants({ book: bookId, id }: { book: string; id: string }) {
  const w = useWorkspace();
  const { campaign, error } = useCampaign(bookId, id);
  const { labels } = useBook(bookId);
  const [page, setPage] = useState(1);
  const [label, setLabel] = useState('');
  const [segment, setSegment] = useState('');
  const segments = useSegments(bookId);
  const [notice, setNotice] = useState('');
  const [removing, setRemoving] = useState<Participant | null>(null);
  const [history, setHistory] = useState<Participant | null>(null);
  const canWrite = atLeast(w.role, 'member');
  const path = { header: inBook(bookId), path: { id } };
  const list = useList<Participant>((signal) => ok(api.GET('/api/campaigns/{id}/participants', { params: { ...path, query: { page, limit: pageSize } }, signal })), `${id}/${page}`);
  if (!campaign) return <Page title="Participants">{error ? <p role="alert">{error}</p> : <p>Loading…</p>}</Page>;

  async function enrollLabel() {
    const name = labels?.find((l) => l.id === label)?.name ?? '';
    try {
      const r = await ok(api.POST('/api/campaigns/{id}/participants/enroll-label', { params: path, body: { label_id: label } }));
      setNotice(`${r.data.enrolled.toLocaleString('en')} contact${r.data.enrolled === 1 ? '' : 's'} labelled “${name}” enrolled (those already in the campaign are not counted).`);
      list.reload();
    } catch (e) {
      setNotice(errorText(e));
    }
  }

  async function enrollSegment() {
    const name = segments.find((x) => x.id === segment)?.name ?? '';
    try {
      const r = await ok(api.POST('/api/campaigns/{id}/participants', { params: path, body: { segment_id: segment } }));
      setNotice(`${r.data.enrolled.toLocaleString('en')} contact${r.data.enrolled === 1 ? '' : 's'} of the segment “${name}” enrolled (those already in the campaign are not counted).`);
      list.reload();
    } catch (e) {
      setNotice(errorText(e));
    }
  }

  return (
    <Page title={`Participants of ${campaign.name}`}>
      <p>
        <a href={`/app/books/${bookId}/campaigns`}>Back to the campaigns</a>
      </p>
      <CampaignTabs book={bookId} id={id} current="participants" />
      <Notice message={notice} />
      {canWrite ? (
        <div class="filters">
          <Field label="Label to enroll" as="select" value={label} onChange={(e) => setLabel((e.target as HTMLSelectElement).value)}>
            <option value="">Choose a label</option>
            {(labels ?? []).map((l) => (
              <option value={l.id}>{l.name}</option>
            ))}
          </Field>
          <button type="button" disabled={!label} onClick={() => void enrollLabel()}>
            Enroll label
          </button>
          <Field label="Segment to enroll" as="select" value={segment} onChange={(e) => setSegment((e.target as HTMLSelectElement).value)}>
            <option value="">Choose a segment</option>
            {segments.map((x) => (
              <option value={x.id}>{x.name}</option>
            ))}
          </Field>
          <button type="button" disabled={!segment} onClick={() => void enrollSegment()}>
            Enroll segment
          </button>
          <p class="hint">
            To enroll chosen contacts, select them in the <a href={`/app/books/${bookId}/contacts`}>contacts table</a> and choose Enroll in campaign.
          </p>
        </div>
      ) : (
        <p class="hint">Enrolling and removing participants: {needs('member')}</p>
      )}
      <DataTable
        caption="Participants"
        rows={list.rows}
        rowKey={(p) => p.id}
        loading={list.loading}
        error={list.error}
        empty="Nobody is enrolled yet."
        columns={[
          { key: 'name', header: 'Contact', cell: (p) => <a href={`/app/contacts/${p.contact_id}`}>{p.contact_name || p.contact_email}</a> },
          { key: 'email', header: 'Email', cell: (p) => p.contact_email },
          { key: 'status', header: 'Status', cell: (p) => states[p.status] },
          { key: 'enrolled', header: 'Enrolled', cell: (p) => new Date(p.enrolled_at).toLocaleString() },
          {
            key: 'actions',
            header: 'Actions',
            cell: (p) => (
              <span class="row-actions">
                <button type="button" class="link" onClick={() => setHistory(p)}>
                  History<span class="visually-hidden"> of {p.contact_name}</span>
                </button>
                {canWrite && p.status !== 'removed' && (
                  <button type="button" class="link danger" onClick={() => setRemoving(p)}>
                    Remove<span class="visually-hidden"> {p.contact_name}</span>
                  </button>
                )}
              </span>
            ),
          },
        ]}
      />
      <Pager page={page} pages={pageCount(list.total, pageSize)} onPage={setPage} />
      {history && <History bookId={bookId} campaignId={id} participant={history} onClose={() => setHistory(null)} />}
      {removing && (
        <Confirm
          title={`Remove ${removing.contact_name} from the campaign?`}
          button="Remove participant"
          run={() => ok(api.DELETE('/api/campaigns/{id}/participants/{pid}', { params: { header: inBook(bookId), path: { id, pid: removing.id } } }))}
          onClose={() => setRemoving(null)}
          onDone={() => {
            setNotice(`${removing.contact_name} was removed from the campaign.`);
            setRemoving(null);
            list.reload();
          }}
        >
          <p>No further step reaches this contact. Its history stays.</p>
        </Confirm>
      )}
    </Page>
  );
}

function History({ bookId, campaignId, participant, onClose }: { bookId: string; campaignId: string; participant: Participant; onClose: () => void }) {
  const items = useResource(
    (signal) => ok(api.GET('/api/campaigns/{id}/participants/{pid}/history', { params: { header: inBook(bookId), path: { id: campaignId, pid: participant.id } }, signal })).then((r) => r.data),
    [participant.id],
  );
  return (
    <Dialog title={`History of ${participant.contact_name || participant.contact_email}`} open onClose={onClose} closeText="Close">
      <p>Enrolled {new Date(participant.enrolled_at).toLocaleString()}.</p>
      <DataTable
        caption="Steps done"
        rows={items.data}
        rowKey={(h) => h.id}
        loading={items.loading}
        error={items.error}
        empty="No step done yet."
        columns={[
          { key: 'step', header: 'Step', cell: (h) => `${h.sort_order + 1}. ${h.step_name}` },
          { key: 'at', header: 'Done', cell: (h) => new Date(h.completed_at).toLocaleString() },
          {
            key: 'result',
            header: 'Result',
            cell: (h) =>
              h.result_type === 'success' ? (h.variant_subject ? `Done, subject “${h.variant_subject}”` : 'Done') : h.result_type === 'skipped' ? `Skipped: ${h.result_detail}` : `Failed: ${h.result_detail}`,
          },
        ]}
      />
    </Dialog>
  );
}
