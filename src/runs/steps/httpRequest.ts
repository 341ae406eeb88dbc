import type { NodeOf, NodeStep } from '../runState.ts';

export const httpRequestStep: NodeStep<NodeOf<'http_request'>> = {
  input: (run, node) => run.http.prepare(node, run.render),
  work: async (run, node) => ({
    value: await run.http.send(
      node,
      run.signal,
      (attempt) => void run.attempts.set(node.id, attempt),
      (attempt, error, delayMs) => run.hooks.onStepRetry?.(node, attempt, error, delayMs),
    ),
    usage: null,
  }),
};
