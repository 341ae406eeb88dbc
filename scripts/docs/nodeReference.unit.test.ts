// The committed node reference is what the registry and openapi.yaml make of it now: a node type
// added, relabelled or given a new config field without `npm run docs:nodes` fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_REGISTRY } from '../../src/nodes/registry.ts';
import { NODE_REFERENCE_PATH, readContractSchemas, renderNodeReference } from './nodeReference.ts';

const root = new URL('../../', import.meta.url);
const committed = readFileSync(new URL(NODE_REFERENCE_PATH, root), 'utf8');
const schemas = readContractSchemas(new URL('openapi.yaml', root).pathname);
const rendered = renderNodeReference(schemas);

describe('docs/workflows/nodes.md', () => {
  it('is up to date with the registry and openapi.yaml (npm run docs:nodes rewrites it)', () => {
    expect(committed).toBe(rendered);
  });

  it.each(NODE_REGISTRY.map((node) => [node.type, node] as const))(
    'gives %s its section with every config field of its schema',
    (type, node) => {
      const config = schemas[node.schema]?.properties?.config;
      const section = committed.split(`\n## ${type}\n`)[1]?.split('\n## ')[0] ?? '';
      expect(section).toContain(node.docs);
      for (const field of Object.keys(config?.properties ?? {})) expect(section).toContain(`| \`${field}\` |`);
    },
  );
});
