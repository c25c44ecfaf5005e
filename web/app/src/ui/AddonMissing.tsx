// AddonMissing is the one sentence every campaign screen shows when the team
// has no Campaigns add-on: what needs it, and where to get it.
import type { ComponentChildren } from 'preact';

export function AddonMissing({ children }: { children: ComponentChildren }) {
  return (
    <p class="addon-missing">
      {children} <a href="/app/billing">Billing</a> shows how to get it.
    </p>
  );
}
