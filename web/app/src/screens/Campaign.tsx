// One campaign: its name and description, its status (activate, pause,
// archive, with the add-on rules explained where they block), run now
// (paid add-on) with its progress, and the sequence editor: steps added,
// edited, deleted, and reordered by drag or by the Move buttons.
import { useState } from 'preact/hooks';
import { api, ApiError, errorText, inBook, ok, type Schemas } from '../api/client';
import { scheduleTypes, stepTypes, type ScheduleType, type StepType } from '../api/enums';
import { campaignStates, schedule } from '../lib/campaign';
import { checkDate, checkEmail, checkRequired } from '../lib/form';
import { dragProps, moved } from '../lib/reorder';
import { atLeast, needs } from '../lib/roles';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { useSegments } from '../lib/useSegments';
import { useWorkspace } from '../lib/workspace';
import { SendingSetup } from '../ui/SendingSetup';
import { CampaignTabs } from '../ui/CampaignTabs';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { Notice, Page } from '../ui/Page';
import { TimingFields, timingBody, timingChecks, timingForm, timingSummary } from '../ui/StepTiming';

type Detail = Schemas['CampaignDetail'];
type Step = Schemas['Step'];
type Status = Schemas['CampaignStatus'];

const stepTypeNames: Record<StepType, string> = { email: 'Send an email', trigger: 'Enroll in another campaign' };
const scheduleTypeNames: Record<ScheduleType, string> = { immediate: 'Right after the previous step', delay: 'Some days after the previous step', fixed_date: 'On a date' };
const noTemplates: Schemas['Template'][] = [];
const noCampaigns: Schemas['CampaignListItem'][] = [];

const actions: { to: Status; name: string }[] = [
  { to: 'active', name: 'Activate' },
  { to: 'paused', name: 'Pause' },
  { to: 'archived', name: 'Archive' },
];

export default function Campaign({ book: bookId, id }: { book: string; id: string }) {
  const w = useWorkspace();
  const [notice, setNotice] = useState('');
  const [blocked, setBlocked] = useState('');
  const [editing, setEditing] = useState<Step | 'new' | 'campaign' | null>(null);
  const [deleting, setDeleting] = useState<Step | 'campaign' | null>(null);
  const [progress, setProgress] = useState('');
  const canWrite = atLeast(w.role, 'member');
  const path = { params: { header: inBook(bookId), path: { id } } };
  const segments = useSegments(bookId);

  const {
    data: c,
    error,
    set: setC,
    reload: load,
  } = useResource<Detail>((signal) => ok(api.GET('/api/campaigns/{id}', { ...path, signal })).then((r) => r.data), [bookId, id], {
    describe: (e) => (e instanceof ApiError && e.status === 404 ? 'This campaign does not exist (any more).' : errorText(e)),
  });
  // The names of the steps' templates and of the other campaigns (for the
  // conditions on them); without them a step shows "—".
  const templates = useResource((signal) => ok(api.GET('/api/campaign-templates', { params: { header: inBook(bookId) }, signal })).then((r) => r.data), [bookId]).data ?? noTemplates;
  const others =
    useResource((signal) => ok(api.GET('/api/campaigns', { params: { header: inBook(bookId) }, signal })).then((r) => r.data.filter((x) => x.id !== id)), [bookId, id]).data ?? noCampaigns;

  if (!c) return <Page title="Campaign">{error ? <p role="alert">{error}</p> : <p>Loading…</p>}</Page>;

  async function setStatus(to: Status, name: string) {
    setBlocked('');
    try {
      await ok(api.PATCH('/api/campaigns/{id}', { ...path, body: { status: to } }));
      // The notice comes with the campaign as it now is (its controls too).
      await load();
      setNotice(`${name}d: the campaign is ${campaignStates[to].toLowerCase()}.`);
    } catch (e) {
      explain(e);
    }
  }
  function explain(e: unknown) {
    if (e instanceof ApiError && (e.code === 'ADDON_REQUIRED' || e.status === 402)) {
      setBlocked(e.message);
    } else {
      setNotice(errorText(e));
    }
  }

  async function run() {
    setBlocked('');
    setProgress('');
    try {
      const r = await ok(api.POST('/api/campaigns/{id}/run', path));
      setProgress(r.data.message);
      // Processing runs in the background: the participants' progress
      // shows as it goes, until two looks a second apart agree.
      let last = -1;
      for (let i = 0; i < 60; i++) {
        await new Promise((res) => setTimeout(res, 1000));
        const s = (await ok(api.GET('/api/campaigns/{id}/stats', path))).data.summary;
        const done = s.total_completions;
        setProgress(`Processing: ${done.toLocaleString('en')} step${done === 1 ? '' : 's'} done for ${s.total_participants.toLocaleString('en')} participants, ${s.completed_count.toLocaleString('en')} through the whole sequence.`);
        if (done === last) {
          setProgress(`Done: ${done.toLocaleString('en')} step${done === 1 ? '' : 's'} done for ${s.total_participants.toLocaleString('en')} participants; ${s.failed_count.toLocaleString('en')} failed.`);
          break;
        }
        last = done;
      }
    } catch (e) {
      explain(e);
    }
  }

  async function move(from: number, to: number) {
    if (!c || to < 0 || to >= c.steps.length) return;
    const order = moved(c.steps, from, to);
    setC({ ...c, steps: order });
    try {
      await ok(api.PATCH('/api/campaigns/{id}/steps/reorder', { ...path, body: { step_ids: order.map((s) => s.id) } }));
      setNotice(`“${order[to].name}” moved to position ${to + 1} of ${order.length}.`);
    } catch (e) {
      setNotice(errorText(e));
    }
    await load();
  }

  const templateName = (tid: string | null) => templates.find((t) => t.id === tid)?.name ?? '—';
  const audienceName = segments.find((x) => x.id === c.audience_segment_id)?.name ?? '';
  const campaignName = (cid: string | null) => others.find((x) => x.id === cid)?.name ?? '—';
  const ids = c.steps.map((s) => s.id);
  return (
    <Page
      title={`Campaign ${c.name}`}
      actions={
        canWrite && (
          <>
            <button type="button" class="secondary" onClick={() => setEditing('campaign')}>
              Edit details
            </button>
            <button type="button" class="danger" onClick={() => setDeleting('campaign')}>
              Delete campaign
            </button>
          </>
        )
      }
    >
      <p>
        <a href={`/app/books/${bookId}/campaigns`}>Back to the campaigns</a>
      </p>
      <CampaignTabs book={bookId} id={id} current="sequence" />
      {canWrite && <SendingSetup bookId={bookId} />}
      {c.description && <p>{c.description}</p>}
      <Notice message={notice} />
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>{campaignStates[c.status]}</dd>
        </div>
        <div>
          <dt>Audience</dt>
          <dd>
            {c.audience_segment_id ? (
              <>
                <a href={`/app/books/${bookId}/segments/${c.audience_segment_id}`}>{audienceName || 'Segment'}</a>
                {c.exit_on_segment_leave ? ' (those who leave it are removed)' : ''}
              </>
            ) : (
              'None: contacts are enrolled by hand'
            )}
          </dd>
        </div>
        <div>
          <dt>Starts on event</dt>
          <dd>{c.entry_event ? <code>{c.entry_event}</code> : 'None'}</dd>
        </div>
      </dl>
      {canWrite ? (
        <div class="actions">
          {actions
            .filter((a) => a.to !== c.status)
            .map((a) => (
              <button type="button" class="secondary" onClick={() => void setStatus(a.to, a.name)}>
                {a.name}
              </button>
            ))}
          <button type="button" disabled={c.status !== 'active'} onClick={() => void run()}>
            Run now
          </button>
          {c.status !== 'active' && <span class="hint">Only a running (active) campaign can be run.</span>}
        </div>
      ) : (
        <p class="hint">Changing the campaign: {needs('member')}</p>
      )}
      {blocked && (
        <p role="alert" class="blocked">
          {blocked} Campaigns need the Campaigns add-on: the trial lets a campaign be set up and activated; sending on the schedule and Run now need the paid add-on. <a href="/app/billing">Billing</a>
        </p>
      )}
      {progress && (
        <p role="status" class="progress-text">
          {progress}
        </p>
      )}

      <div class="section-head">
        <h2>Sequence</h2>
        {canWrite && (
          <button type="button" onClick={() => setEditing('new')}>
            Add step
          </button>
        )}
      </div>
      <DataTable<Step>
        caption="Steps, in their order"
        rows={c.steps}
        rowKey={(s) => s.id}
        empty="No step yet: add the first email."
        columns={[
          {
            key: 'name',
            header: 'Step',
            cell: (s) => (
              <span class={canWrite ? 'draggable' : undefined} {...(canWrite ? dragProps(s.id, ids, (from, to) => void move(from, to)) : {})}>
                {s.sort_order + 1}. {s.name}
              </span>
            ),
          },
          { key: 'type', header: 'Kind', cell: (s) => (s.step_type === 'email' ? `Email: ${templateName(s.email_template_id)}` : `Enroll in: ${campaignName(s.trigger_campaign_id)}`) },
          {
            key: 'when',
            header: 'When',
            cell: (s) => {
              const more = timingSummary(s, c.steps);
              return more ? `${schedule(s)}; ${more}` : schedule(s);
            },
          },
          { key: 'active', header: 'Active', cell: (s) => (s.active ? 'Yes' : 'No: skipped') },
          ...(canWrite
            ? [
                {
                  key: 'actions',
                  header: 'Actions',
                  cell: (s: Step) => {
                    const i = ids.indexOf(s.id);
                    return (
                      <span class="row-actions">
                        <button type="button" class="link" disabled={i === 0} onClick={() => void move(i, i - 1)}>
                          Move up<span class="visually-hidden"> {s.name}</span>
                        </button>
                        <button type="button" class="link" disabled={i === ids.length - 1} onClick={() => void move(i, i + 1)}>
                          Move down<span class="visually-hidden"> {s.name}</span>
                        </button>
                        <button type="button" class="link" onClick={() => setEditing(s)}>
                          Edit<span class="visually-hidden"> {s.name}</span>
                        </button>
                        <button type="button" class="link danger" onClick={() => setDeleting(s)}>
                          Delete<span class="visually-hidden"> {s.name}</span>
                        </button>
                      </span>
                    );
                  },
                },
              ]
            : []),
        ]}
      />
      {editing === 'campaign' && (
        <CampaignForm
          bookId={bookId}
          campaign={c}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            setNotice('Campaign saved.');
            void load();
          }}
        />
      )}
      {editing && editing !== 'campaign' && (
        <StepForm
          bookId={bookId}
          campaignId={id}
          step={editing === 'new' ? null : editing}
          steps={c.steps}
          templates={templates}
          campaigns={others}
          onClose={() => setEditing(null)}
          onSaved={(s) => {
            setEditing(null);
            setNotice(`Step “${s.name}” saved.`);
            void load();
          }}
        />
      )}
      {deleting && (
        <Confirm
          title={deleting === 'campaign' ? `Delete the campaign “${c.name}”?` : `Delete the step “${deleting.name}”?`}
          button={deleting === 'campaign' ? 'Delete campaign' : 'Delete step'}
          run={() =>
            deleting === 'campaign'
              ? ok(api.DELETE('/api/campaigns/{id}', path))
              : ok(api.DELETE('/api/campaigns/{id}/steps/{sid}', { params: { header: inBook(bookId), path: { id, sid: deleting.id } } }))
          }
          onClose={() => setDeleting(null)}
          onDone={() => {
            if (deleting === 'campaign') {
              location.assign(`/app/books/${bookId}/campaigns`);
              return;
            }
            setNotice(`The step “${deleting.name}” was deleted.`);
            setDeleting(null);
            void load();
          }}
        >
          <p>{deleting === 'campaign' ? 'The campaign, its steps, its participants and its history are deleted.' : 'Participants move on to the next step.'} This cannot be undone.</p>
        </Confirm>
      )}
    </Page>
  );
}

function CampaignForm({ bookId, campaign, onClose, onSaved }: { bookId: string; campaign: Detail; onClose: () => void; onSaved: () => void }) {
  const form = useForm({ name: campaign.name, description: campaign.description });
  const [audience, setAudience] = useState(campaign.audience_segment_id ?? '');
  const [exit, setExit] = useState(!!campaign.exit_on_segment_leave);
  const [entry, setEntry] = useState(campaign.entry_event ?? '');
  const segments = useSegments(bookId);
  return (
    <FormDialog
      title="Edit the campaign"
      submit="Save campaign"
      form={form}
      checks={() => ({ name: checkRequired(form.values.name, 'a name') })}
      send={async () => {
        await ok(
          api.PATCH('/api/campaigns/{id}', {
            params: { header: inBook(bookId), path: { id: campaign.id } },
            body: { ...form.values, audience_segment_id: audience || null, exit_on_segment_leave: exit, entry_event: entry.trim() || null },
          }),
        );
        onSaved();
      }}
      onClose={onClose}
    >
      <Field label="Name" required {...form.bind('name')} />
      <Field label="Description" as="textarea" rows={3} {...form.bind('description')} />
      <Field
        label="Audience"
        as="select"
        value={audience}
        onChange={(e) => setAudience((e.target as HTMLSelectElement).value)}
        hint="While the campaign is active, every pass enrolls the segment's newcomers; nobody who completed or was removed is enrolled again."
      >
        <option value="">No audience (enroll by hand)</option>
        {segments.map((x) => (
          <option value={x.id}>{x.name}</option>
        ))}
      </Field>
      <Field
        label="Remove participants who leave the segment"
        type="checkbox"
        checked={exit}
        disabled={!audience}
        onChange={(e) => setExit((e.target as HTMLInputElement).checked)}
        hint="Checked when a step falls due: a participant who no longer matches gets nothing more."
      />
      <Field
        label="Start when this event arrives"
        value={entry}
        placeholder="order.paid"
        onInput={(e) => setEntry((e.target as HTMLInputElement).value)}
        hint="While the campaign is active, an event of this name (POST /api/v1/events) enrolls its contact once, and the immediate steps go out within seconds. {{event.<key>}} in the emails reads the event's properties. Leave empty for none."
      />
    </FormDialog>
  );
}

interface StepFormProps {
  bookId: string;
  campaignId: string;
  step: Step | null;
  steps: Step[];
  templates: Schemas['Template'][];
  campaigns: Schemas['CampaignListItem'][];
  onClose: () => void;
  onSaved: (s: Step) => void;
}

function StepForm({ bookId, campaignId, step, steps, templates, campaigns, onClose, onSaved }: StepFormProps) {
  const form = useForm({
    step_type: step?.step_type ?? ('email' as Step['step_type']),
    name: step?.name ?? '',
    schedule_type: step?.schedule_type ?? ('immediate' as Step['schedule_type']),
    delay_days: String(step?.delay_days ?? 1),
    fixed_date: step?.fixed_date ?? '',
    email_template_id: step?.email_template_id ?? templates[0]?.id ?? '',
    trigger_campaign_id: step?.trigger_campaign_id ?? campaigns[0]?.id ?? '',
    sender_name: step?.sender_name ?? '',
    sender_email: step?.sender_email ?? '',
    active: step?.active ?? true,
    ...timingForm(step),
  });
  const v = form.values;
  const email = v.step_type === 'email';
  const delay = v.schedule_type === 'delay';
  const earlier = steps.filter((s) => s.step_type === 'email' && (!step || s.sort_order < step.sort_order));
  return (
    <FormDialog
      title={step ? `Edit the step “${step.name}”` : 'Add a step'}
      submit={step ? 'Save step' : 'Add step'}
      form={form}
      checks={() => ({
        name: checkRequired(v.name, 'a name'),
        delay_days: v.schedule_type === 'delay' && !/^\d+$/.test(v.delay_days) ? 'Enter a whole number of days.' : '',
        fixed_date: v.schedule_type === 'fixed_date' ? checkRequired(v.fixed_date, 'a date') || checkDate(v.fixed_date) : '',
        email_template_id: email && !v.email_template_id ? 'Choose a template (write one under Templates first).' : '',
        trigger_campaign_id: !email && !v.trigger_campaign_id ? 'Choose the campaign to enroll in.' : '',
        sender_email: email && v.sender_email ? checkEmail(v.sender_email) : '',
        ...timingChecks(v, email, delay),
      })}
      send={async () => {
        const common = {
          name: v.name.trim(),
          active: v.active,
          schedule_type: v.schedule_type,
          delay_days: v.schedule_type === 'delay' ? Number(v.delay_days) : 0,
          fixed_date: v.schedule_type === 'fixed_date' ? v.fixed_date : undefined,
          email_template_id: email ? v.email_template_id : undefined,
          trigger_campaign_id: email ? undefined : v.trigger_campaign_id,
          sender_name: email ? v.sender_name : '',
          sender_email: email ? v.sender_email : '',
          ...timingBody(v, email, delay),
        };
        const params = { header: inBook(bookId), path: { id: campaignId } };
        const r = step
          ? await ok(api.PATCH('/api/campaigns/{id}/steps/{sid}', { params: { header: inBook(bookId), path: { id: campaignId, sid: step.id } }, body: { ...common, fixed_date: common.fixed_date ?? null } }))
          : await ok(api.POST('/api/campaigns/{id}/steps', { params, body: { ...common, step_type: v.step_type } }));
        onSaved(r.data);
      }}
      onClose={onClose}
    >
      {!step && (
        <Field label="Kind" as="select" {...form.bind('step_type')}>
          {stepTypes.map((t) => (
            <option value={t}>{stepTypeNames[t]}</option>
          ))}
        </Field>
      )}
      <Field label="Step name" required {...form.bind('name')} />
      <Field label="When" as="select" {...form.bind('schedule_type')}>
        {scheduleTypes.map((t) => (
          <option value={t}>{scheduleTypeNames[t]}</option>
        ))}
      </Field>
      {v.schedule_type === 'delay' && <Field label="Days after the previous step" type="number" min="0" max="3650" {...form.bind('delay_days')} />}
      {v.schedule_type === 'fixed_date' && <Field label="Date" type="date" {...form.bind('fixed_date')} />}
      {email ? (
        <>
          <Field label="Template" as="select" {...form.bind('email_template_id')}>
            {templates.length === 0 && <option value="">No template yet</option>}
            {templates.map((t) => (
              <option value={t.id}>{t.name}</option>
            ))}
          </Field>
          <Field label="Sender name" hint="Empty: the book's sender." {...form.bind('sender_name')} />
          <Field label="Sender email" type="email" hint="Empty: the book's sender." {...form.bind('sender_email')} />
        </>
      ) : (
        <Field label="Campaign to enroll in" as="select" {...form.bind('trigger_campaign_id')}>
          {campaigns.length === 0 && <option value="">No other campaign</option>}
          {campaigns.map((x) => (
            <option value={x.id}>{x.name}</option>
          ))}
        </Field>
      )}
      <TimingFields values={v} errors={form.errors} set={(k, val) => form.set(k, val as never)} email={email} delay={delay} earlier={earlier} templates={templates} />
      <Field label="Active" type="checkbox" hint="An inactive step is skipped." checked={v.active} onChange={(e) => form.set('active', (e.target as HTMLInputElement).checked)} />
    </FormDialog>
  );
}
