import { compare } from '../branching.ts';
import type { NodeOf, NodeStep } from '../runState.ts';

export const conditionStep: NodeStep<NodeOf<'condition'>> = {
  async input(run, node) {
    // Rendered once: logged as what was compared, and the verdict kept for the node's text.
    const left = await run.render(node.config.left);
    const right = node.config.right === undefined ? '' : await run.render(node.config.right);
    run.verdicts.set(node.id, String(compare(node.config.operator, left, right)));
    return node.config.right === undefined
      ? `${JSON.stringify(left)} ${node.config.operator}`
      : `${JSON.stringify(left)} ${node.config.operator} ${JSON.stringify(right)}`;
  },
  work: async (run, node) => ({ value: run.verdicts.get(node.id)!, usage: null }),
  resume: (run, node, out) => void run.verdicts.set(node.id, out.text),
};
