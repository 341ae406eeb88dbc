import { defineNode } from '../types.ts';
import { answerSchema, formatProblems } from '../responseFormat.ts';
import { agentProblems, agentTemplates, calledWorkflows } from './rules.ts';

export const agent = defineNode({
  type: 'agent',
  schema: 'AgentNode',
  label: 'agent',
  docs: 'a model that calls its tools (your workflows, HTTP requests) in a loop until it answers; its output is the answer',
  templates: agentTemplates,
  output: answerSchema,
  configProblems: (config) => [...agentProblems(config), ...formatProblems(config)],
  upstreamOr: 'prompt',
  calledModel: (config) => (typeof config.model === 'string' ? config.model : undefined),
  calledWorkflows,
  listsCalls: true,
  routable: true,
});
