import { escapePointer } from '../../shared/jsonPointer.ts';
import { defineNode, type CalledInputs } from '../types.ts';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const workflow = defineNode({
  type: 'workflow',
  schema: 'WorkflowCallNode',
  label: 'sub-workflow',
  docs: "runs another of your workflows within the run; its output is that workflow's output",
  // One template per input of the called workflow.
  templates: (config) =>
    isObject(config.inputs)
      ? Object.entries(config.inputs).flatMap(([name, source]) =>
          typeof source === 'string' ? [{ source, pointer: `/inputs/${escapePointer(name)}` }] : [],
        )
      : [],
  source: true,
  calledWorkflow: (config) =>
    typeof config.workflow_id === 'string'
      ? {
          workflowId: config.workflow_id,
          ...(Number.isInteger(config.version) && { version: config.version as number }),
          pointer: '/workflow_id',
          inputs: calledInputs(config),
        }
      : undefined,
});

/**
 * Each input it maps, by name; without any (no `inputs`, or `{}`), every input of the callee takes
 * the upstream value, as documented for a node that only passes its text on.
 */
function calledInputs(config: Record<string, unknown>): CalledInputs {
  const named = isObject(config.inputs)
    ? Object.keys(config.inputs).map((variable) => ({ variable, pointer: `/inputs/${escapePointer(variable)}` }))
    : [];
  return { named, passThrough: named.length === 0, pointer: isObject(config.inputs) ? '/inputs' : '' };
}
