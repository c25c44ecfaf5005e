// The API's closed sets as the dashboard offers them. Every type here comes
// from the generated schema (schema.d.ts, from the API document, whose
// enums a Go test holds to the service's own lists), and every option list
// is checked against its type twice at compile time: each value must be one
// of the type's (`satisfies`), and the list must hold every one of them
// (`every`). A value the API adds or drops therefore fails the build here,
// in this one module, until the dashboard offers it.
import type { components, operations } from './schema';

type Schemas = components['schemas'];
type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;

export type Role = Schemas['Role'];
export type EmailLabel = NonNullable<Schemas['ContactEmail']['label']>;
export type PhoneLabel = NonNullable<Schemas['ContactPhone']['label']>;
export type AddressLabel = NonNullable<Schemas['ContactAddress']['label']>;
export type SocialLabel = NonNullable<Schemas['ContactSocial']['label']>;
export type StepType = Schemas['Step']['step_type'];
export type ScheduleType = Schemas['Step']['schedule_type'];
export type Weekday = Schemas['SendWindow']['days'][number];
export type ConditionIf = Schemas['Condition']['if'];
export type ABMetric = Schemas['ABTest']['metric'];
export type SegmentOp = NonNullable<Schemas['SegmentRule']['op']>;
export type EventType = Schemas['EventType'];
export type DeliveredEventType = Schemas['DeliveredEventType'];
export type ContactSort = NonNullable<Query<'listContactsInternal'>['sort']>;
export type ExportFormat = NonNullable<Query<'exportContactsInternal'>['format']>;
/** StepContactResult is what a step's contacts can be listed by: the numbers of the campaign report. */
export type StepContactResult = NonNullable<Query<'stepContacts'>['result']>;

/**
 * every returns list unchanged when it holds every value of T; otherwise the
 * call does not compile: it then asks for a second argument whose type is
 * the values the list misses.
 */
export function every<T>() {
  return <const L extends readonly T[]>(list: L, ...complete: [Exclude<T, L[number]>] extends [never] ? [] : [missing: Exclude<T, L[number]>]): L => {
    void complete;
    return list;
  };
}

/** Roles, lowest first (each includes the ones before it). */
export const roles = every<Role>()(['viewer', 'member', 'admin', 'owner'] as const satisfies readonly Role[]);

export const emailLabels = every<EmailLabel>()(['work', 'personal', 'other'] as const satisfies readonly EmailLabel[]);
export const phoneLabels = every<PhoneLabel>()(['mobile', 'work', 'other'] as const satisfies readonly PhoneLabel[]);
export const addressLabels = every<AddressLabel>()(['home', 'work', 'other'] as const satisfies readonly AddressLabel[]);
export const socialLabels = every<SocialLabel>()(['linkedin', 'x', 'instagram', 'facebook', 'github', 'youtube', 'other'] as const satisfies readonly SocialLabel[]);

export const stepTypes = every<StepType>()(['email', 'trigger'] as const satisfies readonly StepType[]);
export const scheduleTypes = every<ScheduleType>()(['immediate', 'delay', 'fixed_date'] as const satisfies readonly ScheduleType[]);

/** Days of a send window, Monday first. */
export const weekdays = every<Weekday>()(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const satisfies readonly Weekday[]);

/** Conditions on an earlier email, in the order a step's editor offers them. */
export const conditionIfs = every<ConditionIf>()(['opened', 'not_opened', 'clicked', 'not_clicked', 'delivered', 'bounced'] as const satisfies readonly ConditionIf[]);

/** The webhook log's event filter, in the order the webhook form lists the subscribable types. */
export const deliveredEventTypes = every<DeliveredEventType>()(
  [
    'contact.created',
    'contact.updated',
    'contact.deleted',
    'event.received',
    'email.sent',
    'email.delivered',
    'email.opened',
    'email.clicked',
    'email.bounced',
    'email.complained',
    'email.failed',
    'participant.enrolled',
    'participant.completed',
    'participant.removed',
    'contact.unsubscribed',
    'contact.subscribed',
    'suppression.created',
    'suppression.lifted',
    'member.joined',
    'member.removed',
    'book.created',
    'book.deleted',
    'webhook.test',
  ] as const satisfies readonly DeliveredEventType[],
);

/** Orders of the contacts table, the default first. */
export const contactSorts = every<ContactSort>()(['-created_at', 'created_at', 'name', '-name', '-updated_at', 'updated_at'] as const satisfies readonly ContactSort[]);
