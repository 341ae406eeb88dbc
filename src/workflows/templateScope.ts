// What a template of each node may read, as the paths an editor offers after `{{`: the run
// inputs some text_input provides, the output of each node upstream of it (with the fields its
// schema declares: a typed input's, a structured llm_call's), and the run fields. Read with the
// same capabilities (each type's `runInput` and `output`) and the same rules (RUN_CONTEXT_FIELDS)
// as the save's template check (graphTemplates.ts), so what is offered is what a save accepts.
import { findNodeDefinition, runInputOf } from '../nodes/registry.ts';
import { RUN_CONTEXT_FIELDS, type ValueSchema } from './templates.ts';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** How deep into an object's declared fields the paths go (`nodes.x.output.a.b`). */
const FIELD_DEPTH = 3;
/** At most this many paths per value: a schema of hundreds of fields would drown the list. */
const MAX_FIELDS = 50;

/** `base` and the paths of the fields `schema` declares under it (objects' `properties`, depth-first). */
export function fieldPaths(base: string, schema: ValueSchema, depth = FIELD_DEPTH): string[] {
  const out = [base];
  const properties = schema.properties;
  if (depth === 0 || !isObject(properties)) return out;
  for (const [key, inner] of Object.entries(properties)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) continue; // not readable as `.key` in Liquid
    out.push(...fieldPaths(`${base}.${key}`, isObject(inner) ? inner : {}, depth - 1));
    if (out.length >= MAX_FIELDS) break;
  }
  return out.slice(0, MAX_FIELDS);
}

/** Every node upstream of `id` along `edges` (not `id` itself, even in a cycle). */
function upstreamOf(id: string, before: ReadonlyMap<string, string[]>): string[] {
  const seen = new Set<string>();
  const stack = [...(before.get(id) ?? [])];
  while (stack.length) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(before.get(next) ?? []));
  }
  seen.delete(id);
  return [...seen];
}

/**
 * By node id, the paths its templates may read, in the order an editor lists them: inputs, then
 * upstream nodes (nearest first as the edges list them), then the run fields. Nodes and edges as
 * written; what does not read as a node or an edge is skipped (the save's check names it).
 */
export function templateScopes(nodes: unknown, edges: unknown): Record<string, string[]> {
  const list = Array.isArray(nodes) ? nodes.filter(isObject) : [];
  const inputs: string[] = [];
  const outputs = new Map<string, ValueSchema>();
  for (const node of list) {
    if (!isObject(node.config) || typeof node.type !== 'string') continue;
    const input = runInputOf(node);
    if (input) inputs.push(...fieldPaths(`inputs.${input.variable}`, input.schema));
    if (typeof node.id === 'string' && !outputs.has(node.id))
      outputs.set(node.id, findNodeDefinition(node.type)?.output?.(node.config) ?? {});
  }
  const before = new Map<string, string[]>();
  for (const e of Array.isArray(edges) ? edges.filter(isObject) : []) {
    if (typeof e.from !== 'string' || typeof e.to !== 'string') continue;
    before.set(e.to, [...(before.get(e.to) ?? []), e.from]);
  }
  const run = Object.entries(RUN_CONTEXT_FIELDS).flatMap(([root, fields]) => fields.map((f) => `${root}.${f}`));
  const scopes: Record<string, string[]> = {};
  for (const id of outputs.keys()) {
    const upstream = upstreamOf(id, before).flatMap((u) => fieldPaths(`nodes.${u}.output`, outputs.get(u) ?? {}));
    scopes[id] = [...new Set([...inputs, ...upstream, ...run])];
  }
  return scopes;
}
