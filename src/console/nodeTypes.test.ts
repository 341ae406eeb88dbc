import { describe, expect, it } from 'vitest';
import { NODE_TYPES } from '../workflows/nodeConfig.ts';
import { NODE_REGISTRY } from '../nodes/registry.ts';
import { editorSchemas, editorSchemasOf } from './nodeTypes.ts';

// The editor's palette and forms come from the contract: every type
// WorkflowNode's discriminator maps, each with its config schema, references inlined. A type added
// to openapi.yaml is offered with no change to the console.

describe('the editor node types, read from openapi.yaml', () => {
  it("offers exactly the contract's node types, each with its config schema", () => {
    const { nodeTypes, edge } = editorSchemas();
    expect(nodeTypes.map((t) => t.type).sort()).toEqual([...NODE_TYPES].sort());
    const llm = nodeTypes.find((t) => t.type === 'llm_call')!;
    expect(llm.label).toBe('LLM call');
    expect(llm.config.required).toEqual(['model']);
    expect(Object.keys(llm.config.properties!)).toContain('retry');
    expect(edge.properties?.branch?.enum).toEqual(['true', 'false']);
  });

  it("carries the registry's edge capabilities, which the canvas draws as handles", () => {
    const byType = new Map(editorSchemas().nodeTypes.map((t) => [t.type, t]));
    for (const d of NODE_REGISTRY) {
      const spec = byType.get(d.type)!;
      expect(spec.branches ?? false, d.type).toBe(d.branches ?? false);
      expect(spec.routable ?? false, d.type).toBe(d.routable ?? false);
      expect(spec.noEdgeIn ?? false, d.type).toBe(d.noEdgeIn !== undefined);
      expect(spec.noEdgeOut ?? false, d.type).toBe(d.noEdgeOut !== undefined);
    }
    expect(byType.get('condition')).toMatchObject({ branches: true });
    expect(byType.get('text_input')).toMatchObject({ noEdgeIn: true });
  });

  it("marks each type's template fields (the registry's templates) and its model field (calledModel)", () => {
    const byType = new Map(editorSchemas().nodeTypes.map((t) => [t.type, t]));
    expect(byType.get('llm_call')).toMatchObject({ templateFields: ['prompt'], modelField: 'model' });
    expect(byType.get('agent')).toMatchObject({ templateFields: ['system_prompt', 'prompt'], modelField: 'model' });
    expect(byType.get('template')?.templateFields).toEqual(['template']);
    expect(byType.get('condition')?.templateFields).toEqual(['left', 'right']);
    expect(byType.get('http_request')?.templateFields).toEqual(['url']);
    expect(byType.get('approval')?.templateFields).toEqual(['message']);
    expect(byType.get('split')?.templateFields).toEqual(['text']);
    // A switch's value is an expression (no braces), a text_output has no template.
    expect(byType.get('switch')?.templateFields).toEqual([]);
    expect(byType.get('switch')?.expressionFields).toEqual(['value']);
    expect(byType.get('text_output')?.templateFields).toEqual([]);
    expect(byType.get('template')?.modelField).toBeUndefined();
  });

  it('picks up a type the contract adds, inlining its references (a recursive one is cut, not followed)', () => {
    const spec = {
      components: {
        schemas: {
          WorkflowNode: { discriminator: { mapping: { switch: '#/components/schemas/SwitchNode' } } },
          WorkflowEdge: { type: 'object', properties: { branch: { type: 'string' } } },
          SwitchNode: {
            description: 'Routes by case.',
            properties: {
              config: {
                type: 'object',
                required: ['cases'],
                properties: { cases: { type: 'array', items: { $ref: '#/components/schemas/Case' } } },
              },
            },
          },
          Case: {
            type: 'object',
            properties: { when: { type: 'string' }, next: { $ref: '#/components/schemas/Case' } },
          },
        },
      },
    };
    const { nodeTypes } = editorSchemasOf(spec);
    expect(nodeTypes).toHaveLength(1);
    expect(nodeTypes[0]).toMatchObject({
      type: 'switch',
      label: 'switch',
      description: 'Routes by case.',
      config: { required: ['cases'] },
    });
    const item = nodeTypes[0]!.config.properties!.cases!.items!;
    expect(item.properties!.when).toEqual({ type: 'string' });
    expect(JSON.stringify(item).length).toBeLessThan(5000); // cut at depth 8
  });
});
