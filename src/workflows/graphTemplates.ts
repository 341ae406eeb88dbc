// The templates of a graph's nodes (each type's `templates` in nodes/), checked when the graph is
// saved: each parses, and reads only run inputs that some node reads (each type's `runInput`) and
// the output of nodes upstream of its own, as far as their schemas (each type's `output`) say.
import { findNodeDefinition, isNodeType, nodeDefinition, runInputOf } from '../nodes/registry.ts';
import { analyseTemplate, referenceProblem, type ValueSchema } from './templates.ts';

type Report = (pointer: string, message: string) => void;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export type Templates = Map<string, { source: string; pointer: string }[]>;

/** Nodes with templates (each type's `templates` in nodes/: `template`, `condition`, an `llm_call` with `prompt`...), with each text and its pointer. */
export function templatedNodes(nodes: unknown[], indexById: ReadonlyMap<string, number>): Templates {
  const found: Templates = new Map();
  nodes.forEach((node, i) => {
    if (
      !isObject(node) ||
      typeof node.id !== 'string' ||
      indexById.get(node.id) !== i ||
      !isNodeType(node.type) ||
      !isObject(node.config)
    )
      return;
    const templates = (nodeDefinition(node.type).templates?.(node.config) ?? []).map(({ source, pointer }) => ({
      source,
      pointer: `/nodes/${i}/config${pointer}`,
    }));
    if (templates.length) found.set(node.id, templates);
  });
  return found;
}

/**
 * Each template parses, and reads only inputs some text_input provides and nodes upstream of its
 * own (so their text exists when it renders).
 */
export function checkTemplates(
  nodes: unknown[],
  usable: { from: string; to: string }[],
  templated: Templates,
  report: Report,
): void {
  if (!templated.size) return;
  // What each input and each node's output is, as far as the graph declares (each type's `output`, nodes/).
  const variables = new Map<string, ValueSchema>();
  const outputs = new Map<string, ValueSchema>();
  for (const node of nodes) {
    if (!isObject(node) || !isObject(node.config) || typeof node.type !== 'string') continue;
    const input = runInputOf(node);
    if (input) variables.set(input.variable, input.schema);
    if (typeof node.id === 'string' && !outputs.has(node.id))
      outputs.set(node.id, findNodeDefinition(node.type)?.output?.(node.config) ?? {});
  }
  const before = new Map<string, string[]>();
  for (const e of usable) before.set(e.to, [...(before.get(e.to) ?? []), e.from]);
  for (const [id, templates] of templated) {
    const upstream = new Map<string, ValueSchema>();
    const stack = [...(before.get(id) ?? [])];
    while (stack.length) {
      const next = stack.pop()!;
      if (upstream.has(next)) continue;
      upstream.set(next, outputs.get(next) ?? {});
      stack.push(...(before.get(next) ?? []));
    }
    upstream.delete(id);
    for (const { source, pointer } of templates) {
      const analysis = analyseTemplate(source);
      if (!analysis.ok) {
        report(pointer, analysis.message);
        continue;
      }
      const seen = new Set<string>();
      for (const reference of analysis.references) {
        const problem = referenceProblem(reference, variables, upstream);
        if (problem && !seen.has(problem)) {
          seen.add(problem);
          report(pointer, problem);
        }
      }
    }
  }
}
