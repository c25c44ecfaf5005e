// The timing and audience parts of a step editor: hours on a delay, the
// send window (days and hours, read in each contact's own time zone), the
// condition on an earlier email, and A/B subjects (each with the step's
// template or one of its own) with the test settings.
// timingForm gives a step's values as the form holds them; timingBody
// turns them into the API's fields.
import type { Schemas } from '../api/client';
import { conditionIfs, weekdays, type ABMetric } from '../api/enums';
import { Field } from './Field';
import { Repeat } from './Repeat';

type Step = Schemas['Step'];
type Template = Schemas['Template'];
type Day = Schemas['SendWindow']['days'][number];
type If = Schemas['Condition']['if'];

const dayNames: Record<Day, string> = { mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday', sun: 'Sunday' };
export const days: { key: Day; name: string }[] = weekdays.map((key) => ({ key, name: dayNames[key] }));

const conditionNames: Record<If, string> = {
  opened: 'opened it',
  not_opened: 'did not open it',
  clicked: 'clicked in it',
  not_clicked: 'did not click in it',
  delivered: 'had it delivered',
  bounced: 'had it bounce',
};
export const conditions: { key: If; name: string }[] = conditionIfs.map((key) => ({ key, name: conditionNames[key] }));

export interface TimingValues {
  delay_hours: string;
  window_on: boolean;
  window_days: Day[];
  window_start: string;
  window_end: string;
  condition_if: If | '';
  condition_step_id: string;
  /** email_template_id '' is the step's template. */
  variants: { id?: string; subject: string; email_template_id: string }[];
  ab_metric: ABMetric;
  ab_percent: string;
  ab_after: string;
}

export function timingForm(s: Step | null): TimingValues {
  return {
    delay_hours: String(s?.delay_hours ?? 0),
    window_on: !!s?.send_window,
    window_days: s?.send_window?.days ?? ['mon', 'tue', 'wed', 'thu', 'fri'],
    window_start: s?.send_window?.start ?? '09:00',
    window_end: s?.send_window?.end ?? '17:00',
    condition_if: s?.condition?.if ?? '',
    condition_step_id: s?.condition?.step_id ?? '',
    variants: s?.variants?.map((v) => ({ id: v.id, subject: v.subject, email_template_id: v.email_template_id ?? '' })) ?? [],
    ab_metric: s?.ab_test?.metric ?? 'opens',
    ab_percent: String(s?.ab_test?.test_percent ?? 20),
    ab_after: String(s?.ab_test?.decide_after_minutes ?? 240),
  };
}

/** timingChecks are the client's checks of the timing fields (by form key). */
export function timingChecks(v: TimingValues, email: boolean, delay: boolean): Record<string, string> {
  return {
    delay_hours: delay && !/^([0-9]|1[0-9]|2[0-3])$/.test(v.delay_hours) ? 'Enter 0 to 23 hours.' : '',
    window_days: email && v.window_on && v.window_days.length === 0 ? 'Pick at least one day.' : '',
    window_end: email && v.window_on && v.window_end !== '24:00' && v.window_end <= v.window_start ? 'The window must end after it starts.' : '',
    condition_step_id: v.condition_if && !v.condition_step_id ? 'Pick the earlier email step.' : '',
    variants: email && v.variants.length === 1 ? 'Add a second subject, or remove the first.' : email && v.variants.some((x) => !x.subject.trim()) ? 'Every subject needs text.' : '',
    ab_percent: email && v.variants.length > 1 && !/^\d+$/.test(v.ab_percent) ? 'Enter a percentage from 10 to 100.' : '',
    ab_after: email && v.variants.length > 1 && !/^\d+$/.test(v.ab_after) ? 'Enter the minutes to wait.' : '',
  };
}

/** timingBody is the step body's timing fields (nulls clear on an edit). */
export function timingBody(v: TimingValues, email: boolean, delay: boolean) {
  const ab = email && v.variants.length > 1;
  return {
    delay_hours: delay ? Number(v.delay_hours) : 0,
    send_window: email && v.window_on ? { days: v.window_days, start: v.window_start, end: v.window_end } : null,
    condition: v.condition_if ? { if: v.condition_if, step_id: v.condition_step_id } : null,
    variants: ab ? v.variants.map((x) => ({ id: x.id ?? null, subject: x.subject.trim(), email_template_id: x.email_template_id || null })) : null,
    ...(ab ? { ab_test: { metric: v.ab_metric, test_percent: Number(v.ab_percent), decide_after_minutes: Number(v.ab_after) } } : {}),
  };
}

interface Props {
  values: TimingValues;
  errors: Record<string, string | undefined>;
  set: <K extends keyof TimingValues>(key: K, value: TimingValues[K]) => void;
  email: boolean;
  delay: boolean;
  /** The campaign's email steps before this one (the condition's choices). */
  earlier: Step[];
  /** The book's templates (a variant's choices besides the step's). */
  templates: Template[];
}

export function TimingFields({ values: v, errors, set, email, delay, earlier, templates }: Props) {
  const text = (key: 'delay_hours' | 'window_start' | 'window_end' | 'ab_percent' | 'ab_after') => ({
    value: v[key],
    error: errors[key],
    onInput: (e: Event) => set(key, (e.target as HTMLInputElement).value),
  });
  return (
    <>
      {delay && <Field label="And hours" type="number" min="0" max="23" hint="Added to the days: 1 day and 6 hours is 30 hours after the previous step." {...text('delay_hours')} />}
      {email && (
        <fieldset>
          <legend>Send window</legend>
          <Field label="Only send inside a window" type="checkbox" checked={v.window_on} onChange={(e) => set('window_on', (e.target as HTMLInputElement).checked)} />
          {v.window_on && (
            <>
              <p class="hint">
                The days and hours are read in <strong>each contact's own time zone</strong> (set on the contact); contacts without one use the book's default time zone (Settings). Someone due outside the window waits and gets the email when it opens.
              </p>
              <div class="field" role="group" aria-label="Days of the window">
                {days.map((d) => (
                  <Field
                    label={d.name}
                    type="checkbox"
                    checked={v.window_days.includes(d.key)}
                    onChange={(e) =>
                      set(
                        'window_days',
                        (e.target as HTMLInputElement).checked ? days.map((x) => x.key).filter((k) => k === d.key || v.window_days.includes(k)) : v.window_days.filter((k) => k !== d.key),
                      )
                    }
                  />
                ))}
                {errors.window_days && <p class="error">{errors.window_days}</p>}
              </div>
              <Field label="From" type="time" {...text('window_start')} />
              <Field label="Until" type="text" pattern="([01][0-9]|2[0-4]):[0-5][0-9]" hint="HH:MM, 24:00 for the end of the day." {...text('window_end')} />
            </>
          )}
        </fieldset>
      )}
      <fieldset>
        <legend>Condition</legend>
        <Field label="Only for contacts who" as="select" value={v.condition_if} error={errors.condition_if} onChange={(e) => set('condition_if', (e.target as HTMLSelectElement).value as If | '')}>
          <option value="">Everyone (no condition)</option>
          {conditions.map((c) => (
            <option value={c.key}>{c.name}</option>
          ))}
        </Field>
        {v.condition_if && (
          <Field
            label="Earlier email step"
            as="select"
            value={v.condition_step_id}
            error={errors.condition_step_id}
            hint="The others skip this step (it shows as skipped) and go on."
            onChange={(e) => set('condition_step_id', (e.target as HTMLSelectElement).value)}
          >
            <option value="">Choose…</option>
            {earlier.map((s) => (
              <option value={s.id}>{`${s.sort_order + 1}. ${s.name}`}</option>
            ))}
          </Field>
        )}
      </fieldset>
      {email && (
        <>
          <Repeat
            legend="A/B subjects"
            item="subject"
            items={v.variants}
            max={4}
            blank={() => ({ subject: '', email_template_id: '' })}
            onChange={(items) => set('variants', items)}
            render={(it, i, update) => {
              const letter = String.fromCharCode(65 + i);
              return (
                <div class="row">
                  <Field label={`Subject ${letter}`} value={it.subject} onInput={(e) => update({ subject: (e.target as HTMLInputElement).value })} />
                  <Field label={`Template for ${letter}`} as="select" value={it.email_template_id} onChange={(e) => update({ email_template_id: (e.target as HTMLSelectElement).value })}>
                    <option value="">The step's template</option>
                    {templates.map((t) => (
                      <option value={t.id}>{t.name}</option>
                    ))}
                    {/* A template since deleted stays chosen until another is. */}
                    {it.email_template_id && !templates.some((t) => t.id === it.email_template_id) && <option value={it.email_template_id}>A deleted template</option>}
                  </Field>
                </div>
              );
            }}
          />
          {errors.variants && <p class="error">{errors.variants}</p>}
          {v.variants.length > 1 && (
            <fieldset>
              <legend>A/B test</legend>
              <Field label="Winner by" as="select" value={v.ab_metric} onChange={(e) => set('ab_metric', (e.target as HTMLSelectElement).value as ABMetric)}>
                <option value="opens">Unique open rate</option>
                <option value="clicks">Unique click rate</option>
              </Field>
              <Field label="Test on percent of the participants" type="number" min="10" max="100" hint="They get the subjects in turn; the others wait for the winner." {...text('ab_percent')} />
              <Field label="Decide after minutes" type="number" min="0" max="10080" {...text('ab_after')} />
            </fieldset>
          )}
        </>
      )}
    </>
  );
}

/** timingSummary says in words when and to whom a step sends, beyond its schedule. */
export function timingSummary(s: Step, steps: Step[]): string {
  const parts: string[] = [];
  if (s.send_window) {
    const w = s.send_window;
    parts.push(`${w.days.map((d) => d.charAt(0).toUpperCase() + d.slice(1)).join(', ')} ${w.start}–${w.end} in each contact's time zone`);
  }
  if (s.condition) {
    const c = s.condition;
    const other = steps.find((x) => x.id === c.step_id);
    parts.push(`only if they ${conditions.find((x) => x.key === c.if)?.name ?? c.if} (${other ? other.name : 'a removed step'})`);
  }
  if (s.variants) parts.push(`A/B: ${s.variants.length} subjects${s.winner_variant_id ? ', decided' : ''}`);
  return parts.join('; ');
}
