// The node registry against the contract and the docs: every node type openapi.yaml names has a
// module in src/nodes registered in registry.ts, and every registered module names a schema the
// contract has, a console label and a line of docs. A type added in one place and not the others
// fails here, by name.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { parse } from 'yaml';
import type { components } from '../../generated/api.d.ts';
import { NODE_REGISTRY, NODE_TYPES, type NodeType } from './registry.ts';

type Schema = {
  oneOf?: { $ref: string }[];
  discriminator?: { mapping: Record<string, string> };
  properties?: Record<string, Schema>;
  const?: unknown;
  'x-extensible-enum'?: string[];
  description?: string;
};
const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  components: { schemas: Record<string, Schema> };
};
const schemas = spec.components.schemas;
const ref = (name: string) => `#/components/schemas/${name}`;

describe('the node registry', () => {
  it("registers exactly the contract's node types, in its order (WorkflowNode's branches and mapping, the open lists of types)", () => {
    expect(NODE_REGISTRY.map((d) => ref(d.schema))).toEqual(schemas.WorkflowNode!.oneOf!.map((branch) => branch.$ref));
    expect(Object.fromEntries(NODE_REGISTRY.map((d) => [d.type, ref(d.schema)]))).toEqual(
      schemas.WorkflowNode!.discriminator!.mapping,
    );
    expect(schemas.WorkflowNodeRead!.properties!.type!['x-extensible-enum']).toEqual(NODE_TYPES);
    expect(schemas.RunStep!.properties!.node_type!['x-extensible-enum']).toEqual(NODE_TYPES);
    expect(new Set(NODE_TYPES).size).toBe(NODE_TYPES.length);
    expectTypeOf<NodeType>().toEqualTypeOf<components['schemas']['WorkflowNode']['type']>();
  });

  it.each(NODE_REGISTRY.map((d) => [d.type, d] as const))(
    '%s: its schema exists with its type and a config, and it has a label and docs',
    (type, definition) => {
      const schema = schemas[definition.schema];
      expect(schema, `openapi.yaml components.schemas.${definition.schema}`).toBeDefined();
      expect(schema!.properties!.type!.const).toBe(type);
      expect(schema!.properties!.config).toBeDefined();
      expect(definition.label.trim()).not.toBe('');
      expect(definition.docs.trim()).not.toBe('');
    },
  );

  it.each(NODE_TYPES.map((type) => [type]))('%s: its definition is its own folder', (type) => {
    expect(existsSync(new URL(`./${type}/index.ts`, import.meta.url)), `src/nodes/${type}/index.ts`).toBe(true);
  });

  it('a caseList names the config list whose items are the edgeCases (the editor reads the names there)', () => {
    for (const d of NODE_REGISTRY.filter((n) => n.caseList)) {
      const config = { [d.caseList!]: [{ name: 'a' }, { name: 'b' }, { other: 1 }] };
      expect(d.edgeCases?.(config), d.type).toEqual(['a', 'b']);
    }
    expect(NODE_REGISTRY.filter((n) => n.edgeCases && !n.caseList).map((n) => n.type)).toEqual([]);
  });

  it("the docs' node reference lists every registered type", () => {
    const reference = readFileSync(new URL('../../docs/workflows/nodes.md', import.meta.url), 'utf8');
    const listed = [...reference.matchAll(/^\| `([a-z_]+)` \| .* \| .* \|$/gm)].map((m) => m[1]);
    for (const type of NODE_TYPES)
      expect(listed, `docs/workflows/nodes.md's node table has no row for ${type}`).toContain(type);
  });
});
