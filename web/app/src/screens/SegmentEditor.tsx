// One segment in the rule builder, or a new one: name, description and the
// rule, with a live count of the contacts it matches (and the first of
// them) while it is edited; save, delete, show its contacts, and enroll its
// members in a campaign once.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, errorText, inBook, ok } from '../api/client';
import { plural } from '../lib/bulk';
import { contactName } from '../lib/contact';
import { atLeast } from '../lib/roles';
import { fieldChoices, fromRule, newCondition, newGroup, toRule, type GroupNode, type Rule } from '../lib/segmentRule';
import { useBook } from '../lib/useBook';
import { useDebounced } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { Dialog } from '../ui/Dialog';
import { Field, FormError } from '../ui/Field';
import { BookMissing, Notice, Page } from '../ui/Page';
import { RuleBuilder } from '../ui/RuleBuilder';

const countDelay = 300;

/** ruleError is an API error with the place it names, if any. */
function ruleError(e: unknown): string {
  if (e instanceof ApiError && e.details.length > 0) return e.details.map((d) => d.message).join(' ');
  return errorText(e);
}

export default function SegmentEditor({ book: bookId, id }: { book: string; id?: string }) {
  const w = useWorkspace();
  const { route, query } = useLocation();
  const { book, booksLoaded, labels, fields } = useBook(bookId);
  const canWrite = atLeast(w.role, 'member');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [root, setRoot] = useState<GroupNode | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [saving, setSaving] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [enrolling, setEnrolling] = useState(false);

  // The segment, or the start of a new one (a rule handed over by the contacts page's "Save as segment").
  const saved = useResource((signal) => ok(api.GET('/api/segments/{id}', { params: { header: inBook(bookId), path: { id: id! } }, signal })).then((r) => r.data), [bookId, id], {
    enabled: !!id,
    describe: ruleError,
  });
  useEffect(() => {
    if (!saved.data) return;
    setName(saved.data.name);
    setDescription(saved.data.description);
    setRoot(fromRule(saved.data.rule as Rule));
  }, [saved.data]);
  useEffect(() => {
    setError('');
    if (!id) {
      let start: GroupNode = { ...newGroup('all'), items: [newCondition()] };
      try {
        if (query.rule) start = fromRule(JSON.parse(query.rule) as Rule);
      } catch {
        // A malformed link starts from an empty rule.
      }
      setName(query.name ?? '');
      setDescription('');
      setRoot(start);
    }
  }, [bookId, id]);

  // The book's campaigns, for the campaign conditions (none without the add-on).
  const bookCampaigns = useResource(
    (signal) => ok(api.GET('/api/campaigns', { params: { header: inBook(bookId) }, signal })).then((r) => r.data.map((c) => ({ id: c.id, name: c.name }))),
    [bookId],
  );
  const campaigns = bookCampaigns.error ? [] : bookCampaigns.data;

  const choices = useMemo(() => fieldChoices(fields ?? [], (campaigns?.length ?? 0) > 0), [fields, campaigns]);
  const rule = root ? toRule(root, choices) : null;
  const ruleText = useDebounced(rule ? JSON.stringify(rule) : '', countDelay);
  const preview = usePreview(bookId, ruleText, !!book);

  if (!book) return <Page title="Segment"><BookMissing loaded={booksLoaded} /></Page>;
  const title = id ? `Segment ${name}` : 'New segment';

  async function save() {
    if (!rule) return;
    setSaving(true);
    setError('');
    setNotice('');
    try {
      const body = { name, description, rule: rule as never };
      if (id) {
        await ok(api.PATCH('/api/segments/{id}', { params: { header: inBook(bookId), path: { id } }, body }));
        setNotice('Segment saved.');
      } else {
        const r = await ok(api.POST('/api/segments', { params: { header: inBook(bookId) }, body }));
        route(`/app/books/${bookId}/segments/${r.data.id}`, true);
      }
    } catch (e) {
      setError(ruleError(e));
    } finally {
      setSaving(false);
    }
  }

  return (
    <Page
      title={title}
      actions={
        id && (
          <>
            <a class="button secondary" href={`/app/books/${bookId}/contacts?segment=${id}`}>
              Show contacts
            </a>
            {canWrite && (campaigns?.length ?? 0) > 0 && (
              <button type="button" class="secondary" onClick={() => setEnrolling(true)}>
                Enroll in campaign
              </button>
            )}
            {canWrite && (
              <button type="button" class="danger" onClick={() => setDeleting(true)}>
                Delete segment
              </button>
            )}
          </>
        )
      }
    >
      <Notice message={notice} />
      {root === null ? (
        error || saved.error ? <p role="alert">{error || saved.error}</p> : <p>Loading…</p>
      ) : (
        <form
          class="segment-editor"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <Field label="Name" required maxLength={100} value={name} disabled={!canWrite} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          <Field label="Description" as="textarea" rows={2} value={description} disabled={!canWrite} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
          <RuleBuilder root={root} onChange={setRoot} choices={choices} labels={labels ?? []} campaigns={campaigns ?? []} disabled={!canWrite} />
          <section class="segment-preview" aria-label="Matching contacts">
            <p role="status" aria-live="polite" class="summary">
              {preview.error ? '' : preview.count === null ? 'Counting…' : `${plural(preview.count, 'contact')} ${preview.count === 1 ? 'matches' : 'match'}`}
            </p>
            {preview.error && <p role="alert">{preview.error}</p>}
            {preview.contacts.length > 0 && (
              <ul class="preview-list">
                {preview.contacts.map((c) => (
                  <li>
                    <a href={`/app/contacts/${c.id}`}>{contactName(c)}</a>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <FormError message={error} />
          {canWrite && (
            <button type="submit" disabled={saving || !name.trim()}>
              {saving ? 'Saving…' : 'Save segment'}
            </button>
          )}
        </form>
      )}
      {deleting && id && (
        <Confirm
          title={`Delete the segment “${name}”?`}
          button="Delete segment"
          run={() => ok(api.DELETE('/api/segments/{id}', { params: { header: inBook(bookId), path: { id } } }))}
          onClose={() => setDeleting(false)}
          onDone={() => route(`/app/books/${bookId}/segments`)}
        >
          <p>The rule goes; its contacts stay as they are.</p>
        </Confirm>
      )}
      {enrolling && id && (
        <EnrollSegment
          bookId={bookId}
          segmentId={id}
          campaigns={campaigns ?? []}
          onClose={() => setEnrolling(false)}
          onDone={(m) => {
            setEnrolling(false);
            setNotice(m);
          }}
        />
      )}
    </Page>
  );
}

/** usePreview counts the rule's matches (the latest rule wins; an older answer is dropped). */
function usePreview(bookId: string, ruleText: string, enabled: boolean) {
  // The matches of the previous rule stay listed while the new count is on the way.
  const p = useResource(
    (signal) => ok(api.POST('/api/segments/preview', { params: { header: inBook(bookId) }, body: { rule: JSON.parse(ruleText) }, signal })).then((r) => r.data),
    [bookId, ruleText],
    { enabled: enabled && !!ruleText, keep: true, describe: ruleError },
  );
  return { count: p.loading || p.error ? null : (p.data?.count ?? null), contacts: p.error ? [] : (p.data?.contacts ?? []), error: p.error };
}

/** EnrollSegment enrolls the segment's current members in a campaign, once. */
export function EnrollSegment(p: { bookId: string; segmentId: string; campaigns: { id: string; name: string }[]; onClose: () => void; onDone: (message: string) => void }) {
  const [campaign, setCampaign] = useState(p.campaigns[0]?.id ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  return (
    <Dialog
      title="Enroll the segment’s contacts"
      open
      onClose={p.onClose}
      busy={busy}
      onSubmit={async () => {
        setBusy(true);
        setError('');
        try {
          const r = await ok(api.POST('/api/campaigns/{id}/participants', { params: { header: inBook(p.bookId), path: { id: campaign } }, body: { segment_id: p.segmentId } }));
          const into = p.campaigns.find((c) => c.id === campaign)?.name ?? '';
          p.onDone(`${plural(r.data.enrolled, 'contact')} enrolled in “${into}” (those already in it, and suppressed contacts, are not counted).`);
        } catch (e) {
          setError(ruleError(e));
          setBusy(false);
        }
      }}
      actions={
        <button type="submit" disabled={busy || !campaign}>
          Enroll contacts
        </button>
      }
    >
      <Field label="Campaign" as="select" value={campaign} onChange={(e) => setCampaign((e.target as HTMLSelectElement).value)}>
        {p.campaigns.map((c) => (
          <option value={c.id}>{c.name}</option>
        ))}
      </Field>
      <p class="hint">The contacts who match now are enrolled once; to enroll newcomers by themselves, make the segment the campaign's audience.</p>
      <FormError message={error} />
    </Dialog>
  );
}
