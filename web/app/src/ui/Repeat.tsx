// A list of like items in a form (emails, phones, addresses...): each item
// in its own group with a remove button, and an add button below.
import type { ComponentChildren } from 'preact';

interface Props<T> {
  legend: string;
  item: string; // singular noun for the buttons: "email"
  items: T[];
  max: number;
  blank: () => T;
  onChange: (items: T[]) => void;
  render: (item: T, index: number, update: (patch: Partial<T>) => void) => ComponentChildren;
}

export function Repeat<T>({ legend, item, items, max, blank, onChange, render }: Props<T>) {
  return (
    <fieldset class="repeat">
      <legend>{legend}</legend>
      {items.map((it, i) => (
        <div class="repeat-item" role="group" aria-label={`${item} ${i + 1}`}>
          {render(it, i, (patch) => onChange(items.map((x, j) => (j === i ? { ...x, ...patch } : x))))}
          <button type="button" class="link danger" onClick={() => onChange(items.filter((_, j) => j !== i))}>
            Remove {item} {i + 1}
          </button>
        </div>
      ))}
      {items.length < max && (
        <button type="button" class="secondary" onClick={() => onChange([...items, blank()])}>
          Add {item}
        </button>
      )}
    </fieldset>
  );
}
