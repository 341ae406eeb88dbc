// Cycle detection of a workflow graph (graph.ts): the edges of a run must form a DAG.

/** Strongly connected components with more than one node (Tarjan): each holds at least one cycle. */
export function cycles(nodeIds: string[], edges: { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>(nodeIds.map((id) => [id, []]));
  for (const e of edges) next.get(e.from)?.push(e.to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;

  // Iterative, so a 500-node chain cannot overflow the call stack.
  for (const root of nodeIds) {
    if (index.has(root)) continue;
    const work: { id: string; child: number }[] = [{ id: root, child: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = next.get(frame.id) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child++]!;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ id: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.id, Math.min(low.get(frame.id)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id)!, low.get(frame.id)!));
      if (low.get(frame.id) === index.get(frame.id)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.id);
        if (component.length > 1) found.push(component.reverse());
      }
    }
  }
  return found;
}
