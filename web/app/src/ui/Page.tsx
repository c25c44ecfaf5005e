// The frame of every screen: its heading (which takes focus after an in-app
// navigation, so screen readers announce the new screen), the document
// title, and the screen's main actions.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

let navigated = false;

/** markNavigation is called by the router on every in-app navigation. */
export function markNavigation(): void {
  navigated = true;
}

interface Props {
  title: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
  narrow?: boolean;
}

export function Page({ title, actions, children, narrow }: Props) {
  const h1 = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · contactbook`;
    if (navigated) h1.current?.focus();
  }, [title]);
  return (
    <section class={narrow ? 'page narrow' : 'page'}>
      <header class="page-head">
        <h1 ref={h1} tabIndex={-1}>
          {title}
        </h1>
        {actions && <div class="page-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

/** Notice is a status line (saved, deleted) announced politely. */
export function Notice({ message }: { message: string }) {
  return (
    <p class="notice" role="status">
      {message}
    </p>
  );
}

/** BookMissing is a book screen's body while the books load, or when the address names no book of the team. */
export function BookMissing({ loaded }: { loaded: boolean }) {
  return loaded ? <p>This book does not exist or belongs to another team.</p> : <p>Loading…</p>;
}
