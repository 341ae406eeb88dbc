// Liquid templates of prompts (`llm_call.config.prompt`), `template` nodes and `condition` sides,
// with liquidjs, over JSON values (a field of an object is read as `nodes.extract.output.amount`). A template is data, never code: Liquid has no way to call JavaScript, the engine
// reads no file (an empty in-memory template map, so `include`/`render`/`layout` find nothing),
// only own properties are visible, and parse, render and memory are bounded.
import { Liquid, type Template } from 'liquidjs';

/**
 * What a template sees: `inputs.<variable>`, `nodes.<id>.output` (upstream nodes only), `run` and `workflow`; each a
 * JSON value: a string, or a number, boolean, object or list (typed inputs, `llm_call` with
 * `response_format`), whose fields a template reads (`nodes.extract.output.amount`).
 */
export interface TemplateScope {
  inputs: Record<string, unknown>;
  nodes: Record<string, { output: unknown }>;
  /** The run the user sees (the top-level one, inside a map or a called workflow too), as its wire values. */
  run?: { id: string; created_at: string };
  /** The workflow whose graph the node belongs to (a called one's own), at the version the run executes. */
  workflow?: { id: string; version: number };
  /** An agent's http tool: the arguments the model called it with. */
  args?: Record<string, unknown>;
}

/** The fields of `run` and `workflow` a template may read (the same for every run, so checked at save). */
export const RUN_CONTEXT_FIELDS: Readonly<Record<'run' | 'workflow', readonly string[]>> = {
  run: ['id', 'created_at'],
  workflow: ['id', 'version'],
};

/** The longest text `parse_json` parses (a node's text is bounded lower by NODE_TEXT_MAX_CHARS). */
const PARSE_JSON_MAX_CHARS = 5_000_000;

const isStructured = (value: unknown): boolean => typeof value === 'object' && value !== null;

const engine = new Liquid({
  templates: {},
  ownPropertyOnly: true,
  strictFilters: true,
  parseLimit: 100_000,
  renderLimit: 1_000, // milliseconds of rendering
  memoryLimit: 10_000_000, // characters a render may allocate
  cache: 256,
  // An object or a list prints as its JSON (Liquid's own would be `[object Object]`, or a list's
  // items run together): `{{ nodes.extract.output }}` shows what the node produced.
  outputEscape: (value: unknown) =>
    value === null || value === undefined ? '' : isStructured(value) ? JSON.stringify(value) : String(value),
});

// `json` is Liquid's own (a value as JSON text); `parse_json` is its inverse: a JSON text (a model's
// answer, say) as a value whose fields the template reads. Text that is not JSON fails the render.
engine.registerFilter('parse_json', (value: unknown) => {
  if (typeof value !== 'string') return value;
  if (value.length > PARSE_JSON_MAX_CHARS)
    throw new Error(`parse_json: the text is longer than ${PARSE_JSON_MAX_CHARS} characters`);
  try {
    return JSON.parse(value) as unknown;
  } catch (err) {
    throw new Error(`parse_json: the text is not JSON (${(err as Error).message})`);
  }
});

export type TemplateCheck = { ok: true; references: string[][] } | { ok: false; message: string };

/**
 * Parses a template and lists the variables it reads from the outside (`inputs.ticket`,
 * `nodes.summarise.output`), or says why it does not parse.
 */
export function analyseTemplate(source: string): TemplateCheck {
  let parsed: Template[];
  try {
    parsed = engine.parse(source);
  } catch (err) {
    return { ok: false, message: `is not a valid Liquid template: ${firstLine((err as Error).message)}` };
  }
  try {
    const segments = engine.globalVariableSegmentsSync(parsed);
    return { ok: true, references: segments.map((s) => s.map((part) => String(part))) };
  } catch (err) {
    return { ok: false, message: `is not a valid Liquid template: ${firstLine((err as Error).message)}` };
  }
}

/**
 * What a template may read of a value: a JSON Schema (its `type`, `properties`,
 * `additionalProperties`, `items` are used), `{ type: 'string' }` for text, `{}` for a value of any shape.
 */
export type ValueSchema = Record<string, unknown>;

/**
 * Why a reference is not allowed, or null when it is: the root must be `inputs` (a variable some
 * text_input provides), `nodes` (a node upstream of the template's node, read as `.output`) or
 * `run`/`workflow` (only their fields in RUN_CONTEXT_FIELDS),
 * and a field must exist in the value's schema where that says (`variables` and `upstream` give
 * each one's schema).
 */
export function referenceProblem(
  reference: string[],
  variables: ReadonlyMap<string, ValueSchema>,
  upstream: ReadonlyMap<string, ValueSchema>,
): string | null {
  const [root, name, field, ...rest] = reference;
  const shown = reference.join('.');
  if (root === 'inputs') {
    if (name === undefined) return `"${shown}": name the input, as inputs.<variable>`;
    const schema = variables.get(name);
    if (!schema) return `"${shown}": no text_input has the variable "${name}"`;
    if (field === undefined) return null;
    if (isText(schema))
      return `"${shown}": an input is text, with no field "${field}" (declare the text_input's type to read fields)`;
    return fieldProblem(shown, schema, [field, ...rest]);
  }
  if (root === 'nodes') {
    if (name === undefined) return `"${shown}": name the node, as nodes.<id>.output`;
    const schema = upstream.get(name);
    if (!schema) return `"${shown}": node "${name}" is not upstream of this node (add an edge path from it)`;
    if (field !== 'output' || (rest.length > 0 && isText(schema)))
      return `"${shown}": a node offers only nodes.${name}.output`;
    return fieldProblem(shown, schema, rest);
  }
  if (root !== undefined && Object.hasOwn(RUN_CONTEXT_FIELDS, root)) {
    const fields = RUN_CONTEXT_FIELDS[root as keyof typeof RUN_CONTEXT_FIELDS];
    if (name === undefined || !fields.includes(name))
      return `"${shown}": ${root} offers only ${fields.map((f) => `${root}.${f}`).join(', ')}`;
    if (field !== undefined)
      return `"${shown}": ${root}.${name} is a ${name === 'version' ? 'number' : 'string'}, with no field "${field}"`;
    return null;
  }
  return `"${shown}": unknown variable; a template reads inputs.<variable>, nodes.<id>.output, run.id, run.created_at, workflow.id and workflow.version`;
}

const isText = (schema: ValueSchema) => schema.type === 'string';
const SCALARS = ['string', 'number', 'integer', 'boolean', 'null'];
/** What Liquid reads of any list: its size, first and last items. */
const LIST_FIELDS = ['size', 'first', 'last'];

/** Follows a field path through a schema: a problem where the schema says the field cannot exist. */
function fieldProblem(shown: string, root: ValueSchema, path: string[]): string | null {
  let schema: ValueSchema = root;
  for (const key of path) {
    const type = schema.type;
    if (typeof type === 'string' && SCALARS.includes(type))
      return `"${shown}": the value is a ${type}, with no field "${key}"`;
    if (type === 'array') {
      if (key === 'size') return null;
      if (!LIST_FIELDS.includes(key) && !/^\d+$/.test(key))
        return `"${shown}": the value is a list, with no field "${key}" (read an item by its index)`;
      schema = asSchema(schema.items);
      continue;
    }
    const properties = asSchema(schema.properties);
    if (Object.hasOwn(properties, key)) schema = asSchema(properties[key]);
    else if (closed(schema, properties))
      return `"${shown}": the schema has no field "${key}" (it has ${Object.keys(properties).join(', ')})`;
    else if (typeof schema.additionalProperties === 'object') schema = asSchema(schema.additionalProperties);
    else return null;
  }
  return null;
}

/**
 * A schema that lists its properties and allows no others by saying so or (stricter than JSON
 * Schema, which allows them) by saying nothing: a field it does not list is most likely a typo.
 */
const closed = (schema: ValueSchema, properties: ValueSchema): boolean =>
  Object.keys(properties).length > 0 &&
  (schema.additionalProperties === undefined || schema.additionalProperties === false) &&
  schema.patternProperties === undefined;

const asSchema = (value: unknown): ValueSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as ValueSchema) : {};

/** Renders a template (cached parse) over the scope. Throws TemplateError when rendering fails. */
export async function renderTemplate(source: string, scope: TemplateScope): Promise<string> {
  try {
    return await engine.parseAndRender(source, scope);
  } catch (err) {
    throw new TemplateError(`The template could not be rendered: ${firstLine((err as Error).message)}`);
  }
}

/** A Liquid expression's value (a switch's `value`: `nodes.extract.output.amount`), typed as it is. Throws TemplateError. */
export async function evaluateExpression(expression: string, scope: TemplateScope): Promise<unknown> {
  try {
    return (await engine.evalValue(expression, scope)) as unknown;
  } catch (err) {
    throw new TemplateError(`The expression could not be evaluated: ${firstLine((err as Error).message)}`);
  }
}

export class TemplateError extends Error {}

const firstLine = (message: string) => message.split('\n')[0]!.slice(0, 300);
