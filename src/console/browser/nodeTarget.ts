// The node inspector (src/console/views/nodeInspector.ts): a graph box links to its node's
// details; on a run's page those are folded in the node's row, so opening the link unfolds them.

function openTarget(): void {
  const target = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  const details = target?.querySelector<HTMLDetailsElement>('[data-step-details]');
  if (details) details.open = true;
  target?.focus({ preventScroll: true });
}

export function followNodeLinks(): void {
  window.addEventListener('hashchange', openTarget);
  openTarget();
}
