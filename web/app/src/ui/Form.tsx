// Form is a page's form of useForm, the page twin of FormDialog: the
// submit button runs the form's client checks, then send; errors land at
// the fields or above the button.
import type { ComponentChildren } from 'preact';
import { FormError } from './Field';

interface Props {
  submit: ComponentChildren;
  form: {
    busy: boolean;
    formError: string;
    submit: (checks: Record<string, string>, send: () => Promise<void>) => Promise<void>;
  };
  checks?: () => Record<string, string>;
  send: () => Promise<void>;
  children?: ComponentChildren;
}

export function Form({ submit, form, checks, send, children }: Props) {
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void form.submit(checks ? checks() : {}, send);
      }}
    >
      {children}
      <FormError message={form.formError} />
      <button type="submit" disabled={form.busy}>
        {submit}
      </button>
    </form>
  );
}
