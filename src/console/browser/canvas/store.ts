// What tells the canvas to redraw: a version bumped whenever the builder redraws (the JSON text
// changed, or the selected node, or a watched run's statuses), for React's useSyncExternalStore;
// and the nodes a change wants selected on the next drawing (the pasted ones).

export interface CanvasStore {
  subscribe(listener: () => void): () => void;
  version(): number;
  bump(): void;
  /** The nodes to select on the next drawing, once. */
  selectNext(ids: string[]): void;
  takeSelection(): Set<string> | null;
}

export function canvasStore(): CanvasStore {
  const listeners = new Set<() => void>();
  let version = 0;
  let next: Set<string> | null = null;
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    version: () => version,
    bump() {
      version++;
      for (const l of listeners) l();
    },
    selectNext(ids) {
      next = new Set(ids);
    },
    takeSelection() {
      const taken = next;
      next = null;
      return taken;
    },
  };
}
