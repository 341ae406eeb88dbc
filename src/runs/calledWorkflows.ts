// The workflows a run's `workflow` and `map` nodes call: the run owner's live
// ones only (another user's is not found), each read once per run however many items call it, so
// every item of a map runs the same definition.
import type { Knex } from 'knex';
import { findLiveWorkflow } from '../workflows/store.ts';
import { findVersion } from '../workflows/versions.store.ts';
import type { Graph } from './nodes/subgraph.ts';

/** A live workflow of the user's: at `version` (its immutable record) when given, else as it is now. */
async function readGraph(
  db: Knex,
  userId: number,
  workflowId: string,
  version: number | undefined,
): Promise<Graph | undefined> {
  const row = await findLiveWorkflow(db, userId, workflowId);
  const stored = row && version !== undefined ? await findVersion(db, workflowId, version) : row;
  return stored
    ? { nodes: JSON.parse(stored.nodes) as Graph['nodes'], edges: JSON.parse(stored.edges) as Graph['edges'] }
    : undefined;
}

export function calledWorkflows(
  db: Knex,
  userId: number,
): (workflowId: string, version?: number) => Promise<Graph | undefined> {
  const read = new Map<string, Promise<Graph | undefined>>();
  return (workflowId, version) => {
    const key = `${workflowId}@${version ?? ''}`;
    let graph = read.get(key);
    if (!graph) {
      graph = readGraph(db, userId, workflowId, version);
      read.set(key, graph);
    }
    return graph;
  };
}
