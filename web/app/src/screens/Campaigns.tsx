// A book's campaigns: status, steps and active participants of each, and a
// new campaign.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, inBook, ok, type Schemas } from '../api/client';
import { campaignStates } from '../lib/campaign';
import { checkRequired } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useForm } from '../lib/useForm';
import { useList } from '../lib/useList';
import { useWorkspace } from '../lib/workspace';
import { DataTable } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { BookMissing, Page } from '../ui/Page';
import { AddonMissing } from '../ui/AddonMissing';
import { SendingSetup } from '../ui/SendingSetup';

type Item = Schemas['CampaignListItem'];

export default function Campaigns({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { route } = useLocation();
  const { book, booksLoaded } = useBook(bookId);
  const [creating, setCreating] = useState(false);
  const list = useList<Item>(async (signal) => {
    const r = await ok(api.GET('/api/campaigns', { params: { header: inBook(bookId) }, signal }));
    return { data: r.data, meta: { total: r.data.length } };
  }, bookId);
  const canWrite = atLeast(w.role, 'member');
  if (!book) return <Page title="Campaigns"><BookMissing loaded={booksLoaded} /></Page>;
  const addonMissing = list.errorCode === 'ADDON_REQUIRED';
  return (
    <Page
      title={`Campaigns of ${book.name}`}
      actions={
        canWrite &&
        !addonMissing && (
          <button type="button" onClick={() => setCreating(true)}>
            New campaign
          </button>
        )
      }
    >
      {!canWrite && <p class="hint">Creating and changing campaigns: {needs('member')}</p>}
      {canWrite && !addonMissing && <SendingSetup bookId={bookId} />}
      {addonMissing ? (
        <AddonMissing>{list.error}</AddonMissing>
      ) : (
        <DataTable
          caption="Campaigns"
          rows={list.rows}
          rowKey={(c) => c.id}
          loading={list.loading}
          error={list.error}
          empty="No campaign yet."
          columns={[
            { key: 'name', header: 'Name', cell: (c) => <a href={`/app/books/${bookId}/campaigns/${c.id}`}>{c.name}</a> },
            { key: 'status', header: 'Status', cell: (c) => campaignStates[c.status] },
            { key: 'steps', header: 'Steps', cell: (c) => c.step_count.toLocaleString('en') },
            { key: 'participants', header: 'Active participants', cell: (c) => c.participant_count.toLocaleString('en') },
            { key: 'updated', header: 'Changed', cell: (c) => new Date(c.updated_at).toLocaleString() },
          ]}
        />
      )}
      {creating && <NewCampaign bookId={bookId} onClose={() => setCreating(false)} onCreated={(id) => route(`/app/books/${bookId}/campaigns/${id}`)} />}
    </Page>
  );
}

function NewCampaign({ bookId, onClose, onCreated }: { bookId: string; onClose: () => void; onCreated: (id: string) => void }) {
  const form = useForm({ name: '', description: '' });
  return (
    <FormDialog
      title="New campaign"
      submit="Create campaign"
      form={form}
      checks={() => ({ name: checkRequired(form.values.name, 'a name') })}
      send={async () => onCreated((await ok(api.POST('/api/campaigns', { params: { header: inBook(bookId) }, body: form.values }))).data.id)}
      onClose={onClose}
    >
      <Field label="Name" required {...form.bind('name')} />
      <Field label="Description" as="textarea" rows={3} {...form.bind('description')} />
    </FormDialog>
  );
}
