// The rule language of segments as the rule builder edits it: groups of
// conditions (all of, any of, none of), each condition a field, an op and a
// value. The fields and their ops mirror the API's rule schema; the custom
// fields, labels and campaigns come from the book.

import type { SegmentOp } from '../api/enums';

export type Rule = { all: Rule[] } | { any: Rule[] } | { not: Rule } | RuleCondition;

export interface RuleCondition {
  field: string;
  op: string;
  value?: unknown;
  campaign_id?: string;
  name?: string;
}

/** A group as the builder shows it; `none` is written {"not":{"any":[...]}}. */
export interface GroupNode {
  kind: 'group';
  match: 'all' | 'any' | 'none';
  items: Node[];
}

export interface ConditionNode {
  kind: 'condition';
  field: string;
  op: string;
  value: string; // as typed; converted when the rule is written
  values: string[]; // labels
  campaign: string; // email.*: one campaign, '' for any
  event: string; // event: the event's name
}

export type Node = GroupNode | ConditionNode;

/** The families of fields: each has its ops and its kind of value. */
export type Family = 'text' | 'number' | 'time' | 'birthday' | 'bool' | 'labels' | 'engagement' | 'campaign' | 'event';

export const familyOps: Record<Family, SegmentOp[]> = {
  text: ['contains', 'not_contains', 'eq', 'neq', 'starts_with', 'ends_with', 'is_set', 'is_not_set'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'is_set', 'is_not_set'],
  time: ['within_last_days', 'not_within_last_days', 'before', 'after', 'is_set', 'is_not_set'],
  birthday: ['in_month', 'before', 'after', 'is_set', 'is_not_set'],
  bool: ['eq'],
  labels: ['has_any', 'has_all', 'has_none'],
  engagement: ['within_last_days', 'not_within_last_days', 'ever', 'never'],
  campaign: ['enrolled', 'not_enrolled', 'active', 'completed', 'removed'],
  event: ['within_last_days', 'not_within_last_days', 'ever', 'never'],
};

export const opNames: Record<SegmentOp, string> = {
  eq: 'is',
  neq: 'is not',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  ends_with: 'ends with',
  is_set: 'is set',
  is_not_set: 'is not set',
  gt: 'is more than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  before: 'is before',
  after: 'is after',
  within_last_days: 'in the last … days',
  not_within_last_days: 'not in the last … days',
  in_month: 'is in month',
  has_any: 'has any of',
  has_all: 'has all of',
  has_none: 'has none of',
  ever: 'ever',
  never: 'never',
  enrolled: 'is enrolled in',
  not_enrolled: 'is not enrolled in',
  active: 'is active in',
  completed: 'completed',
  removed: 'was removed from',
};

/** The ops that take no value. */
export const noValue = new Set(['is_set', 'is_not_set', 'ever', 'never']);

export interface FieldChoice {
  field: string;
  name: string;
  family: Family;
  group: string;
}

const builtin: FieldChoice[] = [
  { field: 'first_name', name: 'First name', family: 'text', group: 'Contact' },
  { field: 'last_name', name: 'Last name', family: 'text', group: 'Contact' },
  { field: 'company', name: 'Company', family: 'text', group: 'Contact' },
  { field: 'job_title', name: 'Job title', family: 'text', group: 'Contact' },
  { field: 'email', name: 'Email (any address)', family: 'text', group: 'Contact' },
  { field: 'phone', name: 'Phone (any number)', family: 'text', group: 'Contact' },
  { field: 'website', name: 'Website', family: 'text', group: 'Contact' },
  { field: 'notes', name: 'Notes', family: 'text', group: 'Contact' },
  { field: 'birthday', name: 'Birthday', family: 'birthday', group: 'Contact' },
  { field: 'created_at', name: 'Created', family: 'time', group: 'Contact' },
  { field: 'updated_at', name: 'Updated', family: 'time', group: 'Contact' },
  { field: 'starred', name: 'Starred', family: 'bool', group: 'Contact' },
  { field: 'suppressed', name: 'Suppressed', family: 'bool', group: 'Contact' },
  { field: 'labels', name: 'Labels', family: 'labels', group: 'Contact' },
  { field: 'email.sent', name: 'Was sent an email', family: 'engagement', group: 'Engagement' },
  { field: 'email.delivered', name: 'Had an email delivered', family: 'engagement', group: 'Engagement' },
  { field: 'email.opened', name: 'Opened an email', family: 'engagement', group: 'Engagement' },
  { field: 'email.clicked', name: 'Clicked in an email', family: 'engagement', group: 'Engagement' },
  { field: 'email.bounced', name: 'Bounced', family: 'engagement', group: 'Engagement' },
  { field: 'email.complained', name: 'Complained', family: 'engagement', group: 'Engagement' },
  { field: 'event', name: 'Had an event', family: 'event', group: 'Engagement' },
];

/** fieldChoices are the fields a rule of the book can test. */
export function fieldChoices(custom: { key: string; name: string; type: string }[], withCampaigns: boolean): FieldChoice[] {
  const out = [...builtin];
  for (const f of custom) {
    out.push({ field: `custom.${f.key}`, name: f.name, family: f.type === 'number' ? 'number' : f.type === 'date' ? 'time' : 'text', group: 'Custom fields' });
  }
  if (withCampaigns) out.push({ field: 'campaign', name: 'Campaign', family: 'campaign', group: 'Campaigns' });
  return out;
}

export function newCondition(choice: FieldChoice = builtin[2]): ConditionNode {
  return { kind: 'condition', field: choice.field, op: familyOps[choice.family][0], value: '', values: [], campaign: '', event: '' };
}

export function newGroup(match: GroupNode['match'] = 'all'): GroupNode {
  return { kind: 'group', match, items: [] };
}

/** valueOf converts what the builder holds into the value the op takes. */
function valueOf(n: ConditionNode, family: Family): unknown {
  if (noValue.has(n.op)) return undefined;
  if (family === 'labels') return n.values;
  if (family === 'bool') return n.value !== 'false';
  if (n.op === 'within_last_days' || n.op === 'not_within_last_days' || n.op === 'in_month') return n.value === '' ? n.value : Number(n.value);
  if (family === 'number') return n.value === '' ? n.value : Number(n.value);
  return n.value;
}

/** toRule writes the builder's tree as the API's rule. */
export function toRule(n: Node, choices: FieldChoice[]): Rule {
  if (n.kind === 'group') {
    const items = n.items.map((i) => toRule(i, choices));
    if (n.match === 'none') return { not: { any: items } };
    return n.match === 'all' ? { all: items } : { any: items };
  }
  const family = choices.find((c) => c.field === n.field)?.family ?? 'text';
  const c: RuleCondition = { field: n.field, op: n.op };
  const v = valueOf(n, family);
  if (v !== undefined) c.value = v;
  if (family === 'engagement' && n.campaign) c.campaign_id = n.campaign;
  if (family === 'event') c.name = n.event.trim();
  return c;
}

/** fromRule reads a saved rule into the builder's tree; the root is always a group. */
export function fromRule(r: Rule): GroupNode {
  const node = read(r);
  return node.kind === 'group' ? node : { kind: 'group', match: 'all', items: [node] };
}

function read(r: Rule): Node {
  if ('all' in r) return { kind: 'group', match: 'all', items: r.all.map(read) };
  if ('any' in r) return { kind: 'group', match: 'any', items: r.any.map(read) };
  if ('not' in r) {
    const inner = r.not;
    if ('any' in inner) return { kind: 'group', match: 'none', items: inner.any.map(read) };
    return { kind: 'group', match: 'none', items: [read(inner)] };
  }
  const v = r.value;
  return {
    kind: 'condition',
    field: r.field,
    op: r.op,
    value: v === undefined || v === null || Array.isArray(v) ? '' : String(v),
    values: Array.isArray(v) ? v.map(String) : [],
    campaign: r.campaign_id ?? '',
    event: r.name ?? '',
  };
}

/** filterRule is the rule of the contacts page's filters (search, label, starred). */
export function filterRule(f: { q: string; label: string; starred: string }): Rule {
  const all: Rule[] = [];
  if (f.q) {
    all.push({ any: ['first_name', 'last_name', 'company', 'email'].map((field) => ({ field, op: 'contains', value: f.q })) });
  }
  if (f.label) all.push({ field: 'labels', op: 'has_any', value: [f.label] });
  if (f.starred) all.push({ field: 'starred', op: 'eq', value: f.starred === 'true' });
  return { all };
}
