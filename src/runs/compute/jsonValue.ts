// A JSON value checked against a user's JSON Schema, in a compute process (functions.ts): an
// llm_call's answer with `response_format` (parsed first), or a typed text_input's run input.
// Compiling and validating run here, not in the service's process: a schema's `pattern` may take
// long to match, and the pool's time limit ends it.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { LRUCache } from 'lru-cache';
import { FunctionError } from './functionError.ts';

export interface JsonValueInput {
  /** The text to parse (a model's answer); absent when `value` is already a value. */
  text?: string;
  value?: unknown;
  /** The JSON Schema (2020-12) the value must meet; none: any JSON value. */
  schema?: Record<string, unknown>;
  /** Whose value it is, for the messages: `The model's answer`, `The input "order"`. */
  what: string;
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
/** Compiled schemas by their JSON (a run's nodes share a few; a process serves many runs). */
const compiled = new LRUCache<string, ValidateFunction>({ max: 64 });

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (validate) return validate;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    throw new FunctionError('schema_violation', `The schema could not be used: ${(err as Error).message}`);
  }
  // ajv keeps every schema it compiled: forget it here, the LRU above is the only cache.
  ajv.removeSchema(schema);
  compiled.set(key, validate);
  return validate;
}

const describe = (error: ErrorObject): string =>
  `at ${error.instancePath || '/'}: ${error.message ?? 'is invalid'} (schema path ${error.schemaPath.replace(/^#/, '') || '/'})`;

/** The value (parsed from `text` when given), after checking it against `schema`. */
export function jsonValue({ text, value, schema, what }: JsonValueInput): unknown {
  let parsed = value;
  if (text !== undefined) {
    try {
      parsed = JSON.parse(text) as unknown;
    } catch (err) {
      throw new FunctionError('invalid_json', `${what} is not JSON: ${(err as Error).message}`);
    }
  }
  if (!schema) return parsed;
  const validate = validatorOf(schema);
  if (!validate(parsed))
    throw new FunctionError('schema_violation', `${what} breaks the schema ${describe(validate.errors![0]!)}`);
  return parsed;
}
