// A time zone picker: a text field that suggests the IANA zones as one
// types (the browser's own list), so "berl" finds Europe/Berlin.
import { useId } from 'preact/hooks';
import { Field } from './Field';

/** timeZones are the IANA names the browser knows, UTC first. */
export function timeZones(): string[] {
  const list = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...list.filter((z) => z !== 'UTC')];
}

/** checkTimeZone is '' for an empty value or a zone the browser knows. */
export function checkTimeZone(v: string): string {
  if (!v.trim()) return '';
  try {
    new Intl.DateTimeFormat('en', { timeZone: v.trim() });
    return '';
  } catch {
    return 'Pick a time zone from the list, e.g. Europe/Berlin.';
  }
}

interface Props {
  label: string;
  value: string;
  error?: string;
  hint?: string;
  readOnly?: boolean;
  onInput: (e: Event) => void;
}

export function TimeZoneField(props: Props) {
  const listId = useId();
  return (
    <>
      {/* list is an input attribute Preact's types leave out. */}
      <Field {...props} {...({ list: listId } as object)} autoComplete="off" placeholder="Start typing, e.g. Berlin" />
      <datalist id={listId}>
        {timeZones().map((z) => (
          <option value={z} />
        ))}
      </datalist>
    </>
  );
}
