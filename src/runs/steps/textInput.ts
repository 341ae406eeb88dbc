import { produced } from '../values.ts';
import type { NodeOf, NodeStep, RunState } from '../runState.ts';

/** A text_input's run input (its type was checked when the run started); a declared schema is checked in the compute pool. */
async function inputValue(run: RunState, node: NodeOf<'text_input'>): Promise<unknown> {
  const value = run.inputs[node.config.variable] ?? '';
  if (!node.config.schema) return value;
  return run.budget.compute(
    'jsonValue',
    { value, schema: node.config.schema, what: `The input "${node.config.variable}"` },
    run.signal,
  );
}

export const textInputStep: NodeStep<NodeOf<'text_input'>> = {
  input: (run, node) => produced(run.inputs[node.config.variable] ?? '').text,
  work: async (run, node) => ({ value: await inputValue(run, node), usage: null }),
};
