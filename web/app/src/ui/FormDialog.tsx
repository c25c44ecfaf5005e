// FormDialog is a dialog around one form of useForm: the submit button runs
// the form's client checks, then send; errors land at the fields or above
// the buttons.
import type { ComponentChildren } from 'preact';
import { Dialog } from './Dialog';
import { FormError } from './Field';

interface Props {
  title: string;
  submit: string;
  form: {
    busy: boolean;
    formError: string;
    submit: (checks: Record<string, string>, send: () => Promise<void>) => Promise<void>;
  };
  checks: () => Record<string, string>;
  send: () => Promise<void>;
  onClose: () => void;
  children: ComponentChildren;
}

export function FormDialog({ title, submit, form, checks, send, onClose, children }: Props) {
  return (
    <Dialog
      title={title}
      open
      onClose={onClose}
      busy={form.busy}
      onSubmit={() => form.submit(checks(), send)}
      actions={
        <button type="submit" disabled={form.busy}>
          {submit}
        </button>
      }
    >
      {children}
      <FormError message={form.formError} />
    </Dialog>
  );
}
