// The rule builder: a group of conditions (all, any or none of them), each
// a field, an op and a value offered from the book's own fields, labels and
// campaigns, and groups within groups. Every control is named by its place
// ("Field of condition 2", "Match of group 3.1"), so it can be driven and
// announced one by one.
import type { Label } from '../api/client';
import { familyOps, newCondition, newGroup, noValue, opNames, type ConditionNode, type FieldChoice, type GroupNode, type Node } from '../lib/segmentRule';
import { Field } from './Field';

/** The deepest a group may sit: the API allows 5 groups on a path, and "none of" takes two. */
const maxDepth = 3;

interface Props {
  root: GroupNode;
  onChange: (root: GroupNode) => void;
  choices: FieldChoice[];
  labels: Label[];
  campaigns: { id: string; name: string }[];
  disabled?: boolean;
}

export function RuleBuilder(p: Props) {
  return <GroupEditor {...p} node={p.root} place={[]} onNode={(n) => p.onChange(n as GroupNode)} />;
}

type EditorProps = Props & { node: GroupNode; place: number[]; onNode: (n: Node | null) => void };

function placeName(place: number[]): string {
  return place.map((i) => i + 1).join('.');
}

function GroupEditor(p: EditorProps) {
  const g = p.node;
  const name = placeName(p.place);
  const of = name ? ` of group ${name}` : '';
  const to = name ? ` to group ${name}` : '';
  const set = (items: Node[]) => p.onNode({ ...g, items });
  return (
    <fieldset class="rule-group">
      <legend>{name ? `Group ${name}` : 'Contacts who match'}</legend>
      <div class="row">
        <Field label={`Match${of}`} as="select" value={g.match} disabled={p.disabled} onChange={(e) => p.onNode({ ...g, match: (e.target as HTMLSelectElement).value as GroupNode['match'] })}>
          <option value="all">All of these</option>
          <option value="any">Any of these</option>
          <option value="none">None of these</option>
        </Field>
        {name && (
          <button type="button" class="link" disabled={p.disabled} onClick={() => p.onNode(null)}>
            Remove group {name}
          </button>
        )}
      </div>
      {g.items.length === 0 && <p class="hint">{g.match === 'any' ? 'No condition: nobody matches.' : 'No condition: every contact matches.'}</p>}
      <ol class="rule-items">
        {g.items.map((item, i) => {
          const onItem = (n: Node | null) => set(n === null ? g.items.filter((_, j) => j !== i) : g.items.map((x, j) => (j === i ? n : x)));
          const place = [...p.place, i];
          return (
            <li>
              {item.kind === 'group' ? <GroupEditor {...p} node={item} place={place} onNode={onItem} /> : <ConditionEditor {...p} node={item} place={place} onNode={onItem} />}
            </li>
          );
        })}
      </ol>
      <div class="row">
        <button type="button" class="secondary" disabled={p.disabled} onClick={() => set([...g.items, newCondition()])}>
          Add condition{to}
        </button>
        {p.place.length < maxDepth && (
          <button type="button" class="secondary" disabled={p.disabled} onClick={() => set([...g.items, newGroup('any')])}>
            Add group{to}
          </button>
        )}
      </div>
    </fieldset>
  );
}

const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function ConditionEditor(p: Omit<EditorProps, 'node'> & { node: ConditionNode }) {
  const c = p.node;
  const name = `condition ${placeName(p.place)}`;
  const choice = p.choices.find((x) => x.field === c.field) ?? p.choices[0];
  const ops = familyOps[choice.family];
  const set = (next: Partial<ConditionNode>) => p.onNode({ ...c, ...next });
  const groups = [...new Set(p.choices.map((x) => x.group))];
  const days = c.op === 'within_last_days' || c.op === 'not_within_last_days';
  return (
    <div class="rule-condition row">
      <Field
        label={`Field of ${name}`}
        as="select"
        value={c.field}
        disabled={p.disabled}
        onChange={(e) => {
          const next = p.choices.find((x) => x.field === (e.target as HTMLSelectElement).value) ?? choice;
          const sameFamily = next.family === choice.family;
          set({ field: next.field, op: sameFamily ? c.op : familyOps[next.family][0], value: sameFamily ? c.value : next.family === 'bool' ? 'true' : '', values: [], campaign: '', event: '' });
        }}
      >
        {groups.map((gr) => (
          <optgroup label={gr}>
            {p.choices
              .filter((x) => x.group === gr)
              .map((x) => (
                <option value={x.field}>{x.name}</option>
              ))}
          </optgroup>
        ))}
      </Field>
      {choice.family === 'event' && (
        <Field label={`Event name of ${name}`} value={c.event} disabled={p.disabled} placeholder="order.paid" onInput={(e) => set({ event: (e.target as HTMLInputElement).value })} />
      )}
      <Field label={`Test of ${name}`} as="select" value={c.op} disabled={p.disabled} onChange={(e) => set({ op: (e.target as HTMLSelectElement).value })}>
        {ops.map((o) => (
          <option value={o}>{opNames[o] ?? o}</option>
        ))}
      </Field>
      {!noValue.has(c.op) && <ValueEditor {...p} node={c} name={name} days={days} onSet={set} family={choice.family} />}
      {choice.family === 'engagement' && (
        <Field label={`Campaign of ${name}`} as="select" value={c.campaign} disabled={p.disabled} onChange={(e) => set({ campaign: (e.target as HTMLSelectElement).value })}>
          <option value="">Any campaign</option>
          {p.campaigns.map((x) => (
            <option value={x.id}>{x.name}</option>
          ))}
        </Field>
      )}
      <button type="button" class="link" disabled={p.disabled} onClick={() => p.onNode(null)}>
        Remove {name}
      </button>
    </div>
  );
}

function ValueEditor(p: { node: ConditionNode; name: string; days: boolean; family: string; labels: Label[]; campaigns: { id: string; name: string }[]; disabled?: boolean; onSet: (n: Partial<ConditionNode>) => void }) {
  const c = p.node;
  const label = `Value of ${p.name}`;
  const input = (type: 'text' | 'number' | 'date', extra: Record<string, unknown> = {}) => (
    <Field label={label} type={type} value={c.value} disabled={p.disabled} onInput={(e) => p.onSet({ value: (e.target as HTMLInputElement).value })} {...extra} />
  );
  if (p.days) return input('number', { min: 1, max: 3650, hint: 'days' });
  if (c.op === 'in_month') {
    return (
      <Field label={label} as="select" value={c.value} disabled={p.disabled} onChange={(e) => p.onSet({ value: (e.target as HTMLSelectElement).value })}>
        <option value="">Choose a month</option>
        {months.map((m, i) => (
          <option value={String(i + 1)}>{m}</option>
        ))}
      </Field>
    );
  }
  switch (p.family) {
    case 'number':
      return input('number', { step: 'any' });
    case 'time':
    case 'birthday':
      return input('date');
    case 'bool':
      return (
        <Field label={label} as="select" value={c.value || 'true'} disabled={p.disabled} onChange={(e) => p.onSet({ value: (e.target as HTMLSelectElement).value })}>
          <option value="true">Yes</option>
          <option value="false">No</option>
        </Field>
      );
    case 'labels':
      return (
        <fieldset class="rule-labels">
          <legend>{label}</legend>
          {p.labels.length === 0 && <p class="hint">This book has no labels yet.</p>}
          {p.labels.map((l) => (
            <Field
              label={l.name}
              type="checkbox"
              checked={c.values.includes(l.id)}
              disabled={p.disabled}
              onChange={(e) => p.onSet({ values: (e.target as HTMLInputElement).checked ? [...c.values, l.id] : c.values.filter((v) => v !== l.id) })}
            />
          ))}
        </fieldset>
      );
    case 'campaign':
      return (
        <Field label={label} as="select" value={c.value} disabled={p.disabled} onChange={(e) => p.onSet({ value: (e.target as HTMLSelectElement).value })}>
          <option value="">Choose a campaign</option>
          {p.campaigns.map((x) => (
            <option value={x.id}>{x.name}</option>
          ))}
        </Field>
      );
  }
  return input('text', { maxLength: 500 });
}
