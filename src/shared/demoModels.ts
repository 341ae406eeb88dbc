/**
 * The demo models' names (served by src/runs/providers/demo.ts when DEMO_MODELS is on), here so
 * that the workflows domain can accept them in a graph without depending on the runs domain.
 */
export const DEMO_MODELS = ['echo-slow', 'echo-fail', 'echo-fail-1', 'echo-fail-2', 'echo-fail-3'] as const;
