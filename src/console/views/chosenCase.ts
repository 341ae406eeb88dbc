import type { GraphSnapshot } from '../../runs/service.ts';

// Which case a node that picks among cases (a switch) took, for a step logged before the engine
// stored it (RunStep.case, which the page shows when present). The page reads it off the nodes
// after it: the chosen case's edges lead to nodes that ran, every other case's edges to
// at least one node that was skipped. Said only when exactly one case fits (a case without edges,
// or cases sharing all their targets, leave it unsaid rather than guessed).

/** `statuses`: each node's status on the run's page; a node with no step yet is `pending` or `not_started`. */
export function chosenCase(
  nodeId: string,
  edges: GraphSnapshot['edges'],
  statuses: ReadonlyMap<string, string>,
): string | undefined {
  const byCase = new Map<string, string[]>();
  for (const e of edges) {
    // `error` carries a failure (a routable node's error edges), not a case picked.
    if (e.from !== nodeId || e.case === undefined || e.case === 'error') continue;
    byCase.set(e.case, [...(byCase.get(e.case) ?? []), e.to]);
  }
  const ran = (id: string) => !['skipped', 'pending', 'not_started'].includes(statuses.get(id) ?? 'pending');
  const fits = [...byCase].filter(([, targets]) => targets.every(ran));
  const taken = fits.length === 1 ? fits[0]![0] : undefined;
  // Every other case must show it was not taken: one of its targets skipped.
  const others = [...byCase].filter(([name]) => name !== taken);
  return taken !== undefined && others.every(([, t]) => t.some((id) => statuses.get(id) === 'skipped'))
    ? taken
    : undefined;
}
