// CopyField shows a value to copy elsewhere (a key shown once, an address
// to paste into another service, a snippet of HTML when given rows):
// read-only, selected on focus, with a copy button that says whether the
// browser let it copy.
import { useState } from 'preact/hooks';
import { Field } from './Field';

export function CopyField({ label, value, button, hint, rows }: { label: string; value: string; button: string; hint?: string; rows?: number }) {
  const [copied, setCopied] = useState('');
  return (
    <div class="copy-field">
      <Field label={label} value={value} readOnly hint={hint} as={rows ? 'textarea' : 'input'} rows={rows} class={rows ? 'code' : undefined} onFocus={(e) => (e.target as HTMLInputElement).select()} />
      <button
        type="button"
        class="secondary"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(value);
            setCopied('Copied to the clipboard.');
          } catch {
            setCopied('The browser refused; select the text and copy it yourself.');
          }
        }}
      >
        {button}
      </button>
      <p role="status">{copied}</p>
    </div>
  );
}
