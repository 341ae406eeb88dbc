// The workflows a graph calls (`workflow` nodes, `map` nodes with `workflow_id`), checked when it
// is saved: each must be a live workflow of the same user (another user's is
// not found, as in every other place), and none may lead back to the workflow being saved, through
// any chain of calls: a cycle would recurse at run time. The executor guards again (depth, a
// workflow already on the call stack), since a save racing another can still close a cycle.
// Each call must also fill exactly the callee's run inputs, at the version it pins (else the
// current one): a mapped name the callee lacks, or an input of it left unmapped, is a problem of
// the save (nodes/calledInputs.ts); the run checks again, since an unpinned callee may change.
import type { Knex } from 'knex';
import { inputsInWords, inputsMismatch } from '../nodes/calledInputs.ts';
import { runInputOf } from '../nodes/registry.ts';
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
  // A called workflow (at the version a reference pins, else its current one): what it calls in
  // turn and its run inputs; null: no such workflow of the user's (or no such version).
  const read = new Map<string, Callee | null>();
  const calleeOf = async ({ workflowId, version }: Called): Promise<Callee | null> => {
    const key = `${workflowId}@${version ?? ''}`;
    if (!read.has(key)) {
      if (read.size >= READS_MAX) return { calls: [], inputs: null };
      read.set(key, await readCallee(db, userId, workflowId, version));
    }
    return read.get(key)!;
  };
  const callsOf = async (called: Called) => (await calleeOf(called))?.calls ?? null;
  const problems: ProblemItem[] = [];
  for (const reference of references) {
    const { workflowId, version, pointer } = reference;
    if (workflowId === selfId) {
      problems.push({ pointer, message: 'calls the workflow it belongs to: a cycle' });
      continue;
    }
    const callee = await calleeOf(reference);
    if (callee?.inputs) problems.push(...inputProblems(reference, callee.inputs));
    if (callee === null) {
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

/** A called workflow: the calls it makes and its run inputs (null: not read, past READS_MAX). */
interface Callee {
  calls: Called[];
  inputs: string[] | null;
}

async function readCallee(
  db: Knex,
  userId: number,
  workflowId: string,
  version: number | undefined,
): Promise<Callee | null> {
  const row = await findLiveWorkflow(db, userId, workflowId);
  if (!row) return null;
  const stored = version === undefined ? row.nodes : (await findVersion(db, workflowId, version))?.nodes;
  if (stored === undefined) return null;
  const nodes: unknown = JSON.parse(stored);
  const inputs = Array.isArray(nodes) ? nodes.flatMap((n) => runInputOf(n)?.variable ?? []) : [];
  return { calls: workflowReferences(nodes), inputs };
}

/** A mapped name the callee lacks (at its entry), and each input of the callee left unmapped. */
function inputProblems({ workflowId, version, inputs }: WorkflowReference, calleeInputs: string[]): ProblemItem[] {
  const mismatch = inputsMismatch(inputs, calleeInputs);
  if (!mismatch) return [];
  const callee = `workflow ${JSON.stringify(workflowId)}${version === undefined ? '' : ` at version ${version}`}`;
  const theirs = inputsInWords(calleeInputs);
  return [
    ...mismatch.unknown.map(({ variable, pointer }) => ({
      pointer,
      message: `maps ${JSON.stringify(variable)}, which is no input of ${callee}: ${theirs}`,
    })),
    ...mismatch.unmapped.map((variable) => ({
      pointer: inputs.pointer,
      message: `leaves the input ${JSON.stringify(variable)} of ${callee} unmapped: ${theirs}, and each needs a value`,
    })),
  ];
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
