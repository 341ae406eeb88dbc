// What a graph declares about the values its nodes produce: the schema of each node's output as
// far as its config says (each type's `output` in its definition: a typed text_input, an llm_call
// with `response_format`), used to check templates' field references when a workflow is saved, and
// the problems of the schemas a config declares. Values themselves are checked against these
// schemas when a run executes, in the compute pool (runs/compute/functions.ts): a user's schema
// may hold a pattern that takes long to match, which never runs in the service's process.
import { Ajv2020 } from 'ajv/dist/2020.js';

/** A JSON Schema of a value (templates.ts ValueSchema). */
export type ValueSchema = Record<string, unknown>;

export const TEXT: ValueSchema = { type: 'string' };
export const ANY: ValueSchema = {};

// Only validateSchema (the schema against the 2020-12 meta-schema) runs here: nothing is compiled.
const metaChecker = new Ajv2020({ strict: false, validateFormats: false });

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The declared schema of a text_input's value: its `schema`, else its `type` (text without one). */
export function inputSchema(config: Record<string, unknown>): ValueSchema {
  const type = typeof config.type === 'string' ? config.type : 'string';
  if (type === 'string') return TEXT;
  return isObject(config.schema) ? { type, ...config.schema } : { type };
}

/** Why `schema` is not a JSON Schema (2020-12), or null. */
export function schemaProblem(schema: unknown): string | null {
  if (!isObject(schema)) return null; // its type is the contract's to report
  try {
    if (metaChecker.validateSchema(schema)) return null;
    return `is not a valid JSON Schema: ${metaChecker.errorsText(metaChecker.errors, { dataVar: 'schema' })}`;
  } catch (err) {
    return `is not a valid JSON Schema: ${(err as Error).message}`;
  }
}
