// An approval node's answer: the schema its config declares (`answer_schema`, or the default
// `{approved: boolean}`) and the check of a reviewer's answer against it, shared by the API's
// resume, the link's form and the console (which build their form from the same fields).
import type { ProblemItem } from '../../shared/errors.ts';
import { isObject } from '../valueSchemas.ts';

export interface AnswerField {
  type: 'string' | 'number' | 'integer' | 'boolean';
  enum?: string[];
  description?: string;
}

export interface AnswerSchema {
  type: 'object';
  properties: Record<string, AnswerField>;
  required?: string[];
}

export const DEFAULT_ANSWER_SCHEMA: AnswerSchema = {
  type: 'object',
  properties: { approved: { type: 'boolean' } },
  required: ['approved'],
};

/** The node's answer schema: its config's, or the default. */
export const answerSchemaOf = (config: Record<string, unknown>): AnswerSchema =>
  isObject(config.answer_schema) ? (config.answer_schema as unknown as AnswerSchema) : DEFAULT_ANSWER_SCHEMA;

/** The problems of a declared answer schema past its openapi.yaml schema: what `required` and `enum` name must make sense. */
export function answerSchemaProblems(config: Record<string, unknown>, faulted: ReadonlySet<string>): ProblemItem[] {
  // A schema its openapi.yaml schema refused (a `required` that is no list) is named already.
  if (!isObject(config.answer_schema) || [...faulted].some((p) => p.startsWith('/answer_schema'))) return [];
  const schema = config.answer_schema as unknown as AnswerSchema;
  const problems: ProblemItem[] = [];
  for (const [i, name] of (schema.required ?? []).entries())
    if (!isObject(schema.properties) || !(name in schema.properties))
      problems.push({ pointer: `/answer_schema/required/${i}`, message: `names "${name}", which is not a property` });
  for (const [name, field] of Object.entries(isObject(schema.properties) ? schema.properties : {}))
    if (field.enum !== undefined && field.type !== 'string')
      problems.push({
        pointer: `/answer_schema/properties/${name}/enum`,
        message: 'is only for a field of type string',
      });
  return problems;
}

const fits = (field: AnswerField, value: unknown): string | null => {
  if (field.type === 'boolean') return typeof value === 'boolean' ? null : 'must be boolean';
  if (field.type === 'integer') return Number.isInteger(value) ? null : 'must be integer';
  if (field.type === 'number') return typeof value === 'number' && Number.isFinite(value) ? null : 'must be number';
  if (typeof value !== 'string') return 'must be string';
  if (value.length > 20000) return 'must NOT have more than 20000 characters';
  return field.enum && !field.enum.includes(value) ? `must be one of ${field.enum.join(', ')}` : null;
};

/** The problems of `answer` against `schema`, with pointers under `prefix` (`/body/answer`). */
export function answerProblems(schema: AnswerSchema, answer: Record<string, unknown>, prefix: string): ProblemItem[] {
  const problems: ProblemItem[] = [];
  for (const name of schema.required ?? [])
    if (answer[name] === undefined) problems.push({ pointer: `${prefix}/${name}`, message: 'is required' });
  for (const [name, value] of Object.entries(answer)) {
    const field = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    const problem = field ? fits(field, value) : 'is not a field of the answer';
    if (problem) problems.push({ pointer: `${prefix}/${name}`, message: problem });
  }
  return problems;
}

/** The output a node's answer gives: the answer schema as a value schema (templates read its fields). */
export const answerOutput = (schema: AnswerSchema): Record<string, unknown> => ({
  type: 'object',
  properties: schema.properties,
  required: schema.required ?? [],
  additionalProperties: false,
});
