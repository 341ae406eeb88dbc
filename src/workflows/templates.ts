// Liquid templates of prompts (`llm_call.config.prompt`), `template` nodes and `condition` sides,
// with liquidjs. A template is data, never code: Liquid has no way to call JavaScript, the engine
// reads no file (an empty in-memory template map, so `include`/`render`/`layout` find nothing),
// only own properties are visible, and parse, render and memory are bounded.
import { Liquid, type Template } from 'liquidjs';

/** What a template sees: `inputs.<variable>` and `nodes.<id>.output` (upstream nodes only). */
export interface TemplateScope {
  inputs: Record<string, string>;
  nodes: Record<string, { output: string }>;
}

const engine = new Liquid({
  templates: {},
  ownPropertyOnly: true,
  strictFilters: true,
  parseLimit: 100_000,
  renderLimit: 1_000, // milliseconds of rendering
  memoryLimit: 10_000_000, // characters a render may allocate
  cache: 256,
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
 * Why a reference is not allowed, or null when it is: the root must be `inputs` (a variable some
 * text_input provides) or `nodes` (a node upstream of the template's node, read as `.output`).
 */
export function referenceProblem(reference: string[], variables: ReadonlySet<string>, upstream: ReadonlySet<string>): string | null {
  const [root, name, field, ...rest] = reference;
  const shown = reference.join('.');
  if (root === 'inputs') {
    if (name === undefined) return `"${shown}": name the input, as inputs.<variable>`;
    if (!variables.has(name)) return `"${shown}": no text_input has the variable "${name}"`;
    return field === undefined ? null : `"${shown}": an input is text, with no field "${field}"`;
  }
  if (root === 'nodes') {
    if (name === undefined) return `"${shown}": name the node, as nodes.<id>.output`;
    if (!upstream.has(name)) return `"${shown}": node "${name}" is not upstream of this node (add an edge path from it)`;
    if (field !== 'output' || rest.length > 0) return `"${shown}": a node offers only nodes.${name}.output`;
    return null;
  }
  return `"${shown}": unknown variable; a template reads inputs.<variable> and nodes.<id>.output`;
}

/** Renders a template (cached parse) over the scope. Throws TemplateError when rendering fails. */
export async function renderTemplate(source: string, scope: TemplateScope): Promise<string> {
  try {
    return await engine.parseAndRender(source, scope);
  } catch (err) {
    throw new TemplateError(`The template could not be rendered: ${firstLine((err as Error).message)}`);
  }
}

export class TemplateError extends Error {}

const firstLine = (message: string) => message.split('\n')[0]!.slice(0, 300);
