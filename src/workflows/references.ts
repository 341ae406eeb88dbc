// The workflows a graph calls (`workflow` nodes, `map` nodes with `workflow_id`), checked when it
// is saved: each must be a live workflow of the same user (another user's is
// not found, as in every other place), and none may lead back to the workflow being saved, through
// any chain of calls: a cycle would recurse at run time. The executor guards again (depth, a
// workflow already on the call stack), since a save racing another can still close a cycle.
import type { Knex } from 'knex';
import type { ProblemItem } from '../shared/errors.ts';
import { findLiveWorkflow } from './store.ts';
import { workflowReferences, type WorkflowReference } from './subgraphs.ts';
import { findVersion } from './versions.store.ts';

/** The most stored workflows one save reads while following calls (a user's chain of calls is short). */
const READS_MAX = 200;

export async function referenceProblems(
  db: Knex,
  userId: number,
  selfId: string | undefined,
  nodes: unknown,
): Promise<ProblemItem[]> {
  const references = workflowReferences(nodes);
  if (!references.length) return [];
  // What a called workflow (at the version a reference pins, else its current one) calls in turn;
  // null: no such workflow of the user's (or no such version).
  const calls = new Map<string, Called[] | null>();
  const callsOf = async ({ workflowId, version }: Called): Promise<Called[] | null> => {
    const key = `${workflowId}@${version ?? ''}`;
    if (!calls.has(key)) {
      if (calls.size >= READS_MAX) return [];
      calls.set(key, await readCalls(db, userId, workflowId, version));
    }
    return calls.get(key)!;
  };
  const problems: ProblemItem[] = [];
  for (const reference of references) {
    const { workflowId, version, pointer } = reference;
    if (workflowId === selfId) {
      problems.push({ pointer, message: 'calls the workflow it belongs to: a cycle' });
      continue;
    }
    if ((await callsOf(reference)) === null) {
      problems.push({
        pointer,
        message:
          version === undefined
            ? `no workflow ${JSON.stringify(workflowId)} of yours`
            : `no version ${version} of a workflow ${JSON.stringify(workflowId)} of yours`,
      });
      continue;
    }
    const back = selfId === undefined ? null : await pathTo(reference, selfId, callsOf);
    if (back) problems.push({ pointer, message: `makes a cycle: ${[selfId, ...back].join(' -> ')}` });
  }
  return problems;
}

type Called = Pick<WorkflowReference, 'workflowId' | 'version'>;

async function readCalls(
  db: Knex,
  userId: number,
  workflowId: string,
  version: number | undefined,
): Promise<Called[] | null> {
  const row = await findLiveWorkflow(db, userId, workflowId);
  if (!row) return null;
  const nodes = version === undefined ? row.nodes : (await findVersion(db, workflowId, version))?.nodes;
  return nodes === undefined ? null : workflowReferences(JSON.parse(nodes));
}

/** The workflow ids of a chain of calls from `from` to `to` (both included), or null: breadth first over stored workflows. */
async function pathTo(
  from: Called,
  to: string,
  callsOf: (called: Called) => Promise<Called[] | null>,
): Promise<string[] | null> {
  const key = (c: Called) => `${c.workflowId}@${c.version ?? ''}`;
  const cameFrom = new Map<string, Called | null>([[key(from), null]]);
  const queue = [from];
  while (queue.length) {
    const at = queue.shift()!;
    for (const next of (await callsOf(at)) ?? []) {
      if (cameFrom.has(key(next))) continue;
      cameFrom.set(key(next), at);
      if (next.workflowId === to) {
        const path = [next.workflowId];
        for (let back = cameFrom.get(key(next)); back; back = cameFrom.get(key(back))) path.unshift(back.workflowId);
        return path;
      }
      queue.push(next);
    }
  }
  return null;
}
