// How each node type runs, by type: the executor (executor.ts) reads this table, so a type of
// nodes/registry.ts without its step here is a type error.
import type { NodeType } from '../../nodes/registry.ts';
import type { NodeOf, NodeStep, WorkflowNode } from '../runState.ts';
import { textInputStep } from './textInput.ts';
import { llmCallStep } from './llmCall.ts';
import { templateStep } from './template.ts';
import { conditionStep } from './condition.ts';
import { textOutputStep } from './textOutput.ts';
import { httpRequestStep } from './httpRequest.ts';
import { switchStep } from './switch.ts';
import { coalesceStep } from './coalesce.ts';
import { splitStep } from './split.ts';
import { mapStep } from './map.ts';
import { workflowStep } from './workflow.ts';
import { agentStep } from './agent.ts';
import { approvalStep } from './approval.ts';

const STEPS: { [T in NodeType]: NodeStep<NodeOf<T>> } = {
  text_input: textInputStep,
  llm_call: llmCallStep,
  template: templateStep,
  condition: conditionStep,
  text_output: textOutputStep,
  http_request: httpRequestStep,
  switch: switchStep,
  coalesce: coalesceStep,
  split: splitStep,
  map: mapStep,
  workflow: workflowStep,
  agent: agentStep,
  approval: approvalStep,
};

/** How a node of this type runs. */
export const stepOf = <N extends WorkflowNode>(node: N): NodeStep<N> => STEPS[node.type] as unknown as NodeStep<N>;
