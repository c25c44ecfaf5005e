// Confirm is the dialog of every irreversible action: it says what happens,
// names the action on its button, runs it, and keeps a failure on screen.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { errorText } from '../api/client';
import { Dialog } from './Dialog';
import { FormError } from './Field';

interface Props {
  title: string;
  children: ComponentChildren;
  button: string;
  run: () => Promise<unknown>;
  onClose: () => void;
  onDone: () => void;
}

export function Confirm({ title, children, button, run, onClose, onDone }: Props) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  return (
    <Dialog
      title={title}
      open
      onClose={onClose}
      busy={busy}
      onSubmit={async () => {
        setBusy(true);
        setError('');
        try {
          await run();
          onDone();
        } catch (e) {
          setError(errorText(e));
          setBusy(false);
        }
      }}
      actions={
        <button type="submit" class="danger" disabled={busy}>
          {button}
        </button>
      }
    >
      {children}
      <FormError message={error} />
    </Dialog>
  );
}
