// The workflows a run's `workflow` and `map` nodes call: the run owner's live
// ones only (another user's is not found), each read once per run however many items call it, so
// every item of a map runs the same definition.
import type { Knex } from 'knex';
import { calledGraph } from '../workflows/versions.ts';
import type { Graph } from './nodes/subgraph.ts';

/** A live workflow of the user's: at `version` when given, else as it is now (workflows/versions.ts). */
const readGraph = (
  db: Knex,
  userId: number,
  workflowId: string,
  version: number | undefined,
): Promise<Graph | undefined> => calledGraph({ db }, userId, workflowId, version);

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
