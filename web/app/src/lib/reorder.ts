// Reordering a list by drag and drop (native HTML5) and by the keyboard
// (Move up / Move down buttons): one drag source at a time, the move as
// (from, to) indexes for the screen to apply and save.

/** moved is list with the item at from put at to. */
export function moved<T>(list: readonly T[], from: number, to: number): T[] {
  const out = [...list];
  const [x] = out.splice(from, 1);
  out.splice(to, 0, x);
  return out;
}

let dragging = '';

/**
 * dragProps makes an element a drag source and a drop target among the
 * ids: dropping the dragged one here moves it to this one's place.
 */
export function dragProps(id: string, ids: readonly string[], onMove: (from: number, to: number) => void) {
  return {
    draggable: true,
    onDragStart: () => (dragging = id),
    onDragOver: (e: DragEvent) => e.preventDefault(),
    onDrop: (e: DragEvent) => {
      e.preventDefault();
      const from = ids.indexOf(dragging);
      dragging = '';
      if (from >= 0 && from !== ids.indexOf(id)) onMove(from, ids.indexOf(id));
    },
  };
}
