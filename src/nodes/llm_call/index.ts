import { defineNode, keyTemplates } from '../types.ts';
import { answerSchema, formatProblems } from '../responseFormat.ts';

export const llmCall = defineNode({
  type: 'llm_call',
  schema: 'LlmCallNode',
  label: 'LLM call',
  docs: 'sends a prompt to the model; its output is the answer (with `response_format`, the answer parsed as JSON)',
  templates: keyTemplates('prompt'),
  output: answerSchema,
  configProblems: formatProblems,
  upstreamOr: 'prompt',
  calledModel: (config) => (typeof config.model === 'string' ? config.model : undefined),
  routable: true,
});
