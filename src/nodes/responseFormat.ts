// A `response_format` as llm_call and agent nodes take it (openapi.yaml LlmCallNode, AgentNode):
// the schema of the answer it asks for, and what its schema cannot say.
import type { ProblemItem } from '../shared/errors.ts';
import { ANY, isObject, schemaProblem, TEXT, type ValueSchema } from './valueSchemas.ts';

/** Its answer: text, or with `response_format` JSON (of the schema it gives); going on past a failure, its error or its default (errorRoutes.ts). */
export function answerSchema(config: Record<string, unknown>): ValueSchema {
  if (config.on_error === 'continue') return ANY;
  const format = isObject(config.response_format) ? config.response_format : {};
  if (format.type === 'json_schema' && isObject(format.json_schema) && isObject(format.json_schema.schema))
    return format.json_schema.schema;
  return format.type === 'json_object' ? { type: 'object' } : TEXT;
}

/** Its `response_format`: a `json_schema` exactly when its type says so, and a JSON Schema. */
export function formatProblems(config: Record<string, unknown>): ProblemItem[] {
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
