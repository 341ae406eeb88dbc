import { isEmpty } from '../compute/switchCase.ts';
import { produced } from '../values.ts';
import type { NodeOf, NodeStep } from '../runState.ts';

export const coalesceStep: NodeStep<NodeOf<'coalesce'>> = {
  work: async (_run, _node, _input, before) => ({
    value: (before.find((p) => !isEmpty(p.value)) ?? produced('')).value,
    usage: null,
  }),
};
