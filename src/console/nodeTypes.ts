import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { NODE_REGISTRY } from '../nodes/registry.ts';
import { nodeTypeLabel } from './views/graphSvg.ts';

// The node types the workflow editor offers, and the schema of each one's config, read from
// openapi.yaml at start: every type of the node registry (nodes/registry.ts, whose test holds it
// equal to what the contract's WorkflowNode maps), so a registered type appears in the editor's
// palette, with a form built from its schema, without a change here. `$ref`s are inlined (a
// recursive one is cut, not followed forever).

/** A JSON Schema as the contract writes one (the subset the editor's forms read; the rest passes through). */
export interface FieldSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, FieldSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  items?: FieldSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  example?: unknown;
  [keyword: string]: unknown;
}

export interface NodeTypeSpec {
  type: string;
  /** How the console names it ("LLM call"); the type itself for a type the console has no words for. */
  label: string;
  description?: string | undefined;
  config: FieldSchema;
  /** The contract's example node of this type, when it has one. */
  example?: unknown;
}

export interface EditorSchemas {
  nodeTypes: NodeTypeSpec[];
  /** WorkflowEdge: what an edge may carry besides its ends (`branch`). */
  edge: FieldSchema;
}

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

/** `types`: each type and the reference of its node schema; by default those the spec's WorkflowNode maps. */
export function editorSchemasOf(spec: Spec, types?: Record<string, string>): EditorSchemas {
  const mapping = types ?? spec.components.schemas.WorkflowNode?.discriminator?.mapping ?? {};
  const nodeTypes = Object.entries(mapping).map(([type, ref]): NodeTypeSpec => {
    const node = inline(spec, { $ref: ref }) as FieldSchema;
    const config = (node.properties?.config ?? { type: 'object' }) as FieldSchema;
    return {
      type,
      label: nodeTypeLabel(type),
      description: node.description ?? config.description,
      config,
      example: node.example,
    };
  });
  return { nodeTypes, edge: inline(spec, { $ref: '#/components/schemas/WorkflowEdge' }) as FieldSchema };
}

let loaded: EditorSchemas | undefined;

/** The registered node types, their schemas read from the contract once. */
export function editorSchemas(): EditorSchemas {
  const types = Object.fromEntries(
    NODE_REGISTRY.map((definition) => [definition.type, `#/components/schemas/${definition.schema}`]),
  );
  loaded ??= editorSchemasOf(
    parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as Spec,
    types,
  );
  return loaded;
}
