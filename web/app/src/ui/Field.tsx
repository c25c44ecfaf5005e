// One labelled form control: its label, an optional hint, and the error of
// the field, tied to the control with aria-describedby and aria-invalid, so
// a screen reader announces the error with the field.
import type { ComponentChildren, PartialInputHTMLAttributes } from 'preact';
import { useId } from 'preact/hooks';

type Props = Omit<PartialInputHTMLAttributes<HTMLInputElement>, 'label' | 'class' | 'as'> & {
  label: string;
  error?: string;
  hint?: ComponentChildren;
  class?: string;
  /** The control: an input (default), a select (options as children) or a textarea. */
  as?: 'input' | 'select' | 'textarea';
  rows?: number;
  children?: ComponentChildren;
};

export function Field(props: Props) {
  const id = useId();
  const { label, error, hint, class: cls, as = 'input', ...rest } = props;
  const hintId = hint ? `${id}-hint` : undefined;
  const errId = error ? `${id}-err` : undefined;
  const control = {
    id,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': [hintId, errId].filter(Boolean).join(' ') || undefined,
    ...rest,
  };
  const isCheck = as === 'input' && (rest.type === 'checkbox' || rest.type === 'radio');
  return (
    <div class={`field${isCheck ? ' field-check' : ''}${error ? ' has-error' : ''}${cls ? ' ' + cls : ''}`}>
      {isCheck && <input {...(control as object)} />}
      <label for={id}>{label}</label>
      {as === 'select' ? (
        <select {...(control as object)} />
      ) : as === 'textarea' ? (
        <textarea {...(control as object)} />
      ) : (
        !isCheck && <input {...(control as object)} />
      )}
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p class="error" id={errId}>
          {error}
        </p>
      )}
    </div>
  );
}

/** FormError is the message of a form as a whole, announced when it appears. */
export function FormError({ message }: { message: string }) {
  return message ? (
    <p class="form-error" role="alert">
      {message}
    </p>
  ) : null;
}
