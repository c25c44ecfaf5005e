// The one modal dialog of the app, on the native <dialog>: showModal() makes
// the rest of the page inert and keeps focus inside, Escape closes it, and
// the browser returns focus to the control that opened it.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

interface Props {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
  /** Submit turns the body into a form; its buttons go in `actions`. */
  onSubmit?: () => void;
  actions?: ComponentChildren;
  busy?: boolean;
  /** The dismiss button's name; Cancel unless the dialog only informs. */
  closeText?: string;
}

export function Dialog({ title, open, onClose, children, onSubmit, actions, busy, closeText = 'Cancel' }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      const opener = document.activeElement as HTMLElement | null;
      d.showModal();
      return () => opener?.focus?.();
    }
    if (!open && d.open) d.close();
  }, [open]);
  const body = (
    <>
      <h2 id={titleId}>{title}</h2>
      <div class="dialog-body">{children}</div>
      <div class="dialog-actions">
        {actions}
        <button type="button" class="secondary" onClick={onClose} disabled={busy}>
          {closeText}
        </button>
      </div>
    </>
  );
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      aria-busy={busy || undefined}
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      {open &&
        (onSubmit ? (
          <form
            method="dialog"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              onSubmit();
            }}
          >
            {body}
          </form>
        ) : (
          body
        ))}
    </dialog>
  );
}
