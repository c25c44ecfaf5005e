// useForm keeps an editor's values, its per-field errors and its form-level
// error, and runs a submit that places the API's error at the field it names.
import { useState } from 'preact/hooks';
import { collect, placeError, type FieldErrors } from './form';

export function useForm<T extends Record<string, unknown>>(initial: T) {
  const [values, setValues] = useState<T>(initial);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState(false);

  function set<K extends keyof T>(key: K, value: T[K]) {
    setValues((v) => ({ ...v, [key]: value }));
    if (errors[key as string]) setErrors((e) => ({ ...e, [key as string]: '' }));
  }

  /** bind gives an input its value, its change handler and its error. */
  function bind(key: keyof T & string) {
    return {
      value: String(values[key] ?? ''),
      error: errors[key],
      onInput: (e: Event) => set(key, (e.target as HTMLInputElement).value as T[typeof key]),
    };
  }

  /**
   * submit runs the client checks, then send; a failure lands at its field
   * (or the form). The first field in error takes focus.
   */
  async function submit(checks: Record<string, string>, send: () => Promise<void>, fields: readonly string[] = Object.keys(initial)) {
    const found = collect(checks);
    setErrors(found);
    setFormError('');
    if (Object.keys(found).length) {
      focusInvalid();
      return;
    }
    setBusy(true);
    try {
      await send();
    } catch (e) {
      const placed = placeError(e, fields);
      setErrors(placed.fields);
      setFormError(placed.form);
      focusInvalid();
    } finally {
      setBusy(false);
    }
  }

  return { values, setValues, set, bind, errors, setErrors, formError, setFormError, busy, submit };
}

function focusInvalid() {
  requestAnimationFrame(() => (document.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus());
}
