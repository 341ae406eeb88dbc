import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { NODE_REGISTRY } from '../nodes/registry.ts';
import { nodeTypeLabel } from './views/graphSvg.ts';
import type { EditorSchemas, FieldSchema, NodeTypeSpec } from './editorTypes.ts';

// The node types the workflow editor offers, and the schema of each one's config, read from
// openapi.yaml at start: every type of the node registry (nodes/registry.ts, whose test holds it
// equal to what the contract's WorkflowNode maps), so a registered type appears in the editor's
// palette, with a form built from its schema, without a change here. `$ref`s are inlined (a
// recursive one is cut, not followed forever).

type Spec = {
  components: { schemas: Record<string, FieldSchema & { discriminator?: { mapping?: Record<string, string> } }> };
};

/** The schema with every `#/components/schemas/X` reference replaced by X itself (at most 8 deep). */
function inline(spec: Spec, schema: unknown, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(spec, s, depth));
  if (typeof schema !== 'object' || schema === null) return schema;
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const target = spec.components.schemas[ref.replace('#/components/schemas/', '')];
    return depth >= 8 || !target ? {} : inline(spec, target, depth + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inline(spec, v, depth)]));
}

/**
 * `types`: each type and the reference of its node schema; by default those the spec's WorkflowNode
 * maps. `caseLists`: by type, the config list whose items name its edges' cases.
 */
export function editorSchemasOf(
  spec: Spec,
  types?: Record<string, string>,
  caseLists: Record<string, string> = {},
): EditorSchemas {
  const mapping = types ?? spec.components.schemas.WorkflowNode?.discriminator?.mapping ?? {};
  const nodeTypes = Object.entries(mapping).map(([type, ref]): NodeTypeSpec => {
    const node = inline(spec, { $ref: ref }) as FieldSchema;
    const config = (node.properties?.config ?? { type: 'object' }) as FieldSchema;
    return {
      type,
      label: nodeTypeLabel(type),
      description: node.description ?? config.description,
      config,
      caseList: caseLists[type],
      example: node.example,
    };
  });
  return { nodeTypes, edge: inline(spec, { $ref: '#/components/schemas/WorkflowEdge' }) as FieldSchema };
}

/** A text no config holds: where a type's `templates` gives it back unchanged, the field is a template. */
const PROBE = '\u0000template probe';

/**
 * The top-level string fields of `config` that the registry reads as templates (given back as
 * written) and as expressions (given back inside `{{ }}`: a switch's `value`).
 */
function templateFieldsOf(
  definition: (typeof NODE_REGISTRY)[number],
  config: FieldSchema,
): { templates: string[]; expressions: string[] } {
  const strings = Object.entries(config.properties ?? {}).filter(([, p]) => p.type === 'string' && !p.enum);
  const probe = Object.fromEntries(strings.map(([k]) => [k, PROBE]));
  let found: { source: string; pointer: string }[] = [];
  try {
    found = definition.templates?.(probe) ?? [];
  } catch {
    // A type whose templates need more than strings offers no autocomplete.
  }
  const keysWith = (source: string) =>
    strings.map(([k]) => k).filter((k) => found.some((t) => t.pointer === `/${k}` && t.source === source));
  return { templates: keysWith(PROBE), expressions: keysWith(`{{ ${PROBE} }}`) };
}

let loaded: EditorSchemas | undefined;

/** The registered node types, their schemas read from the contract once. */
export function editorSchemas(): EditorSchemas {
  const types = Object.fromEntries(
    NODE_REGISTRY.map((definition) => [definition.type, `#/components/schemas/${definition.schema}`]),
  );
  if (loaded) return loaded;
  loaded = editorSchemasOf(
    parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as Spec,
    types,
    Object.fromEntries(NODE_REGISTRY.flatMap((d) => (d.caseList ? [[d.type, d.caseList]] : []))),
  );
  // The registry's edge capabilities, which the canvas draws as handles (never read off type names),
  // and the fields the forms treat apart: templates and the called model.
  for (const spec of loaded.nodeTypes) {
    const definition = NODE_REGISTRY.find((d) => d.type === spec.type);
    if (!definition) continue;
    Object.assign(spec, {
      branches: definition.branches,
      routable: definition.routable,
      noEdgeIn: definition.noEdgeIn !== undefined || undefined,
      noEdgeOut: definition.noEdgeOut !== undefined || undefined,
    });
    const { templates, expressions } = templateFieldsOf(definition, spec.config);
    spec.templateFields = templates;
    spec.expressionFields = expressions;
    // `calledModel` reads `config.model` (llm_call, agent): that field is the model's.
    if (definition.calledModel?.({ model: PROBE }) === PROBE) spec.modelField = 'model';
  }
  return loaded;
}
