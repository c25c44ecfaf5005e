import type { Schemas } from '../api/client';

/** LabelChips shows labels as coloured chips; the names carry the meaning, the colours only help. */
export function LabelChips({ labels }: { labels: Schemas['LabelRef'][] }) {
  if (!labels.length) return null;
  return (
    <ul class="chips">
      {labels.map((l) => (
        <li class="chip">
          <span class="dot" style={{ backgroundColor: l.color }} aria-hidden="true" />
          {l.name}
        </li>
      ))}
    </ul>
  );
}
