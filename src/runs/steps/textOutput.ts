import { formatOutput, type Produced } from '../values.ts';
import type { NodeOf, NodeStep, RunState } from '../runState.ts';

/** Its share of the run's output, made from its inputs (when it runs, and again when it is resumed). */
function writeOutput(run: RunState, node: NodeOf<'text_output'>, before: Produced[]): unknown {
  const value = formatOutput(node.config.format, before);
  run.sizes.output(node.id, value);
  run.output[node.id] = value;
  return value;
}

export const textOutputStep: NodeStep<NodeOf<'text_output'>> = {
  work: async (run, node, _input, before) => ({ value: writeOutput(run, node, before), usage: null }),
  resume: (run, node, _out, before) => void writeOutput(run, node, before),
};
