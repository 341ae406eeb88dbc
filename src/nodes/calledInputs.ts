// Whether a node that calls a workflow fills exactly that workflow's run inputs: every name it maps
// must be an input of the callee, and every input of the callee must be filled. A callee's input
// has no default (a run of it on its own needs each one too), so an input left unmapped would have
// nothing to take but the caller's upstream text, which is how a renamed input used to go unnoticed.
// Read at save (workflows/references.ts, the callee at the version pinned) and at run time
// (runs/nodes/subgraph.ts, where an unpinned callee may have changed since).
import type { CalledInputs } from './types.ts';

export interface InputsMismatch {
  /** Names the node maps that the callee has no input of. */
  unknown: { variable: string; pointer: string }[];
  /** The callee's inputs the node leaves unfilled. */
  unmapped: string[];
}

/** What does not fit between a node's mapping and the callee's run inputs; null when it all fits. */
export function inputsMismatch(inputs: CalledInputs, calleeInputs: readonly string[]): InputsMismatch | null {
  const has = new Set(calleeInputs);
  const unknown = inputs.named.filter((n) => !has.has(n.variable));
  const filled = new Set([...inputs.named.map((n) => n.variable), ...(inputs.optional ?? [])]);
  const unmapped = inputs.passThrough ? [] : calleeInputs.filter((v) => !filled.has(v));
  return unknown.length || unmapped.length ? { unknown, unmapped } : null;
}

const quoted = (names: readonly string[]) => names.map((n) => JSON.stringify(n)).join(', ');

/** The callee's inputs in words, for a message. */
export const inputsInWords = (calleeInputs: readonly string[]) =>
  calleeInputs.length ? `its inputs are ${quoted(calleeInputs)}` : 'it has no inputs';

/** One sentence naming every name of a mismatch (a run failure's message). */
export function mismatchInWords(mismatch: InputsMismatch, calleeInputs: readonly string[]): string {
  const parts = [
    ...(mismatch.unknown.length ? [`no input ${quoted(mismatch.unknown.map((u) => u.variable))} (mapped here)`] : []),
    ...(mismatch.unmapped.length ? [`input ${quoted(mismatch.unmapped)} not mapped here`] : []),
  ];
  return `${parts.join('; ')}; ${inputsInWords(calleeInputs)}`;
}
