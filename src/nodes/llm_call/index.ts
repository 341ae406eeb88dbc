import type { ProblemItem } from '../../shared/errors.ts';
import { defineNode, keyTemplates } from '../types.ts';
import { ANY, isObject, schemaProblem, TEXT, type ValueSchema } from '../valueSchemas.ts';

/** Its answer: text, or with `response_format` JSON (of the schema it gives); going on past a failure, its error or its default (../errorRoutes.ts). */
function answerSchema(config: Record<string, unknown>): ValueSchema {
  if (config.on_error === 'continue') return ANY;
  const format = isObject(config.response_format) ? config.response_format : {};
  if (format.type === 'json_schema' && isObject(format.json_schema) && isObject(format.json_schema.schema))
    return format.json_schema.schema;
  return format.type === 'json_object' ? { type: 'object' } : TEXT;
}

/** Its `response_format`: a `json_schema` exactly when its type says so, and a JSON Schema. */
function formatProblems(config: Record<string, unknown>): ProblemItem[] {
  if (!isObject(config.response_format)) return [];
  const format = config.response_format;
  const problems: ProblemItem[] = [];
  if (format.type === 'json_schema' && format.json_schema === undefined)
    problems.push({ pointer: '/response_format/json_schema', message: 'is required when type is json_schema' });
  if (format.type !== 'json_schema' && format.json_schema !== undefined)
    problems.push({ pointer: '/response_format/json_schema', message: 'is only used when type is json_schema' });
  const problem =
    format.type === 'json_schema' && isObject(format.json_schema) ? schemaProblem(format.json_schema.schema) : null;
  if (problem) problems.push({ pointer: '/response_format/json_schema/schema', message: problem });
  return problems;
}

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
