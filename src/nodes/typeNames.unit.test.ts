// Adding a node type touches its folder (src/nodes/<type>/), its step (src/runs/steps/<type>.ts),
// the registry's lines (nodes/registry.ts, runs/steps/index.ts) and openapi.yaml: every other
// reader asks the registry what a type does. So no source file but a type's own folder and step
// may compare a value with that type's name; a reader that did would have to change with each new
// type. Seed data and the console's starter graph write `type: 'text_input'` as data, not as a
// comparison, and are not caught.
import { describe, expect, it } from 'vitest';
import { comparisonsIn, describeComparison, nameComparisons, sourceFiles } from '../../test/support/nameComparisons.ts';
import { NODE_TYPES } from './registry.ts';

/** The step module of a type: `llm_call` runs in steps/llmCall.ts. */
const stepFile = (type: string) => `src/runs/steps/${type.replace(/_(\w)/g, (_, c: string) => c.toUpperCase())}.ts`;

/** A type's own modules may name it. */
const ownModule = (file: string, type: string) => file.startsWith(`src/nodes/${type}/`) || file === stepFile(type);

describe('node type names', () => {
  it('no source file outside a type’s folder and step compares a value with that type’s name', () => {
    const comparisons = nameComparisons(sourceFiles(), NODE_TYPES);
    const outside = comparisons.filter((c) => !ownModule(c.file, c.name));
    expect(outside.map(describeComparison), 'ask the registry (a capability of nodes/types.ts NodeDefinition)').toEqual(
      [],
    );
  });

  it('finds such a comparison where there is one (the scan itself works)', () => {
    const source = [
      "// node.type === 'map' in a comment is prose",
      "const label = notFoundPage(user, 'workflow');",
      "if (node.type === 'text_input') read();",
      "const called = 'llm_call' !== type;",
      'switch (node.type) {',
      '  case "switch":',
      '}',
      "const format = kind === 'text_inputs';",
    ].join('\n');
    expect(comparisonsIn('src/x.ts', source, NODE_TYPES).map(describeComparison)).toEqual([
      "src/x.ts:3: node.type compared with 'text_input'",
      "src/x.ts:4: type compared with 'llm_call'",
      "src/x.ts:6: case 'switch':",
    ]);
  });
});
