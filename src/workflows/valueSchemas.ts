// What a graph declares about the values its nodes produce (issue 33, typed values): the schema
// of each node's output as far as its config says (a typed text_input, an llm_call with
// `response_format`), used to check templates' field references when a workflow is saved, and
// the problems of the schemas a config declares. Values themselves are checked against these
// schemas when a run executes, in the compute pool (runs/compute/functions.ts): a user's schema
// may hold a pattern that takes long to match, which never runs in the service's process.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ProblemItem } from '../shared/errors.ts';
import type { ValueSchema } from './templates.ts';

const TEXT: ValueSchema = { type: 'string' };
const ANY: ValueSchema = {};

// Only validateSchema (the schema against the 2020-12 meta-schema) runs here: nothing is compiled.
const metaChecker = new Ajv2020({ strict: false, validateFormats: false });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The declared schema of a text_input's value: its `schema`, else its `type` (text without one). */
export function inputSchema(config: Record<string, unknown>): ValueSchema {
  const type = typeof config.type === 'string' ? config.type : 'string';
  if (type === 'string') return TEXT;
  return isObject(config.schema) ? { type, ...config.schema } : { type };
}

/**
 * The schema of a node's output, from its type and config: text for the text nodes, the declared
 * schema of a typed text_input or an llm_call asking for JSON, and "any" for the node types whose
 * output is the value they are given (or that this module does not know).
 */
export function outputSchema(type: string, config: Record<string, unknown>): ValueSchema {
  switch (type) {
    case 'text_input':
      return inputSchema(config);
    case 'llm_call': {
      // Going on past a failure, its output may be its error or its default (nodes/errorRoutes.ts).
      if (config.on_error === 'continue') return ANY;
      const format = isObject(config.response_format) ? config.response_format : {};
      if (format.type === 'json_schema' && isObject(format.json_schema) && isObject(format.json_schema.schema)) return format.json_schema.schema;
      return format.type === 'json_object' ? { type: 'object' } : TEXT;
    }
    case 'template':
    case 'condition':
    case 'text_output':
      return TEXT;
    default:
      return ANY;
  }
}

/** Why `schema` is not a JSON Schema (2020-12), or null. */
function schemaProblem(schema: unknown): string | null {
  if (!isObject(schema)) return null; // its type is the contract's to report
  try {
    if (metaChecker.validateSchema(schema)) return null;
    return `is not a valid JSON Schema: ${metaChecker.errorsText(metaChecker.errors, { dataVar: 'schema' })}`;
  } catch (err) {
    return `is not a valid JSON Schema: ${(err as Error).message}`;
  }
}

/** The problems of the schemas a node's config declares, as pointers inside the config. */
export function declaredSchemaProblems(type: string, config: Record<string, unknown>): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const report = (pointer: string, message: string | null) => void (message && problems.push({ pointer, message }));
  if (type === 'text_input' && config.schema !== undefined) {
    if (config.type !== 'object' && config.type !== 'array') report('/schema', 'is only for a text_input whose type is object or array');
    else report('/schema', schemaProblem(config.schema));
  }
  if (type === 'llm_call' && isObject(config.response_format)) {
    const format = config.response_format;
    if (format.type === 'json_schema' && format.json_schema === undefined) report('/response_format/json_schema', 'is required when type is json_schema');
    if (format.type !== 'json_schema' && format.json_schema !== undefined) report('/response_format/json_schema', 'is only used when type is json_schema');
    if (format.type === 'json_schema' && isObject(format.json_schema)) report('/response_format/json_schema/schema', schemaProblem(format.json_schema.schema));
  }
  return problems;
}
