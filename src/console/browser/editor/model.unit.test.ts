import { describe, expect, it } from 'vitest';
import { initial, setAt } from './fields.ts';
import { edgeMarkOf, freshId, problemsOf, readGraph, type Graph } from './model.ts';

// The editor's rules that need no page: reading the JSON text, naming a new node, placing the
// preview's problems on nodes, and writing a config field's value.

describe("the workflow editor's graph model", () => {
  it('reads the JSON text as a graph, or says why it cannot', () => {
    expect(readGraph('{"nodes": [')).toEqual({ reason: expect.stringMatching(/^it is not JSON \(/) });
    expect(readGraph('{"nodes": {}}')).toEqual({ reason: 'it needs "nodes" and "edges" lists' });
    expect(readGraph('{"nodes": [{"id": "a"}]}')).toEqual({ reason: 'a node has no id or type' });
    expect(readGraph('{"nodes": [], "edges": [{"from": "a"}]}')).toEqual({ reason: 'an edge has no from or to' });
    // A node without a config gets an empty one; missing lists are empty.
    expect(readGraph('{"nodes": [{"id": "a", "type": "text_input"}]}')).toEqual({
      graph: { nodes: [{ id: 'a', type: 'text_input', config: {} }], edges: [] },
    });
  });

  it('names a new node after its type, with the first number no node has', () => {
    const graph: Graph = { nodes: [{ id: 'llm_call_1', type: 'llm_call', config: {} }], edges: [] };
    expect(freshId(graph, 'llm_call')).toBe('llm_call_2');
    expect(freshId(graph, 'text input')).toBe('text_input_1');
  });

  it("finds a node's problems by its index in the API's pointers", () => {
    const a = { id: 'a', type: 't', config: {} };
    const b = { id: 'b', type: 't', config: {} };
    const graph: Graph = { nodes: [a, b], edges: [] };
    const problems = [
      { pointer: '/nodes/1/config/model', message: 'is required', label: 'node "b", config.model' },
      { pointer: '/nodes/10', message: 'x', label: 'node 11' },
      { pointer: '/nodes/1', message: 'unknown type', label: 'node "b"' },
    ];
    expect(problemsOf(graph, problems, b).map((p) => p.message)).toEqual(['is required', 'unknown type']);
    expect(problemsOf(graph, problems, a)).toEqual([]);
  });
});

describe("the workflow editor's config fields", () => {
  it('sets a value at a path, and removes it (an emptied object too) for undefined', () => {
    const config: Record<string, unknown> = { model: 'echo' };
    setAt(config, ['retry', 'attempts'], 3);
    expect(config).toEqual({ model: 'echo', retry: { attempts: 3 } });
    setAt(config, ['retry', 'attempts'], undefined);
    expect(config).toEqual({ model: 'echo' });
  });

  it("starts a new node's required fields at the contract's example, else the simplest value", () => {
    expect(
      initial({
        type: 'object',
        required: ['variable', 'count', 'format', 'on'],
        properties: {
          variable: { type: 'string', example: 'question' },
          count: { type: ['integer', 'null'], minimum: 1 },
          format: { type: 'string', enum: ['plain', 'json'] },
          on: { type: 'boolean' },
          optional: { type: 'string' },
        },
      }),
    ).toEqual({ variable: 'question', count: 1, format: 'plain', on: false });
  });

  it("offers an edge out of a node with cases its case names and default, any other edge the contract's branches", () => {
    const editor = {
      typeSpec: new Map([
        ['switch', { type: 'switch', label: 'switch', config: {}, caseList: 'cases' }],
        ['template', { type: 'template', label: 'template', config: {} }],
      ]),
      branchValues: ['true', 'false'],
    };
    const route = {
      id: 'route',
      type: 'switch',
      config: { cases: [{ name: 'a' }, { operator: '==' }, { name: 'b' }] },
    };
    expect(edgeMarkOf(editor, route)).toEqual({
      key: 'case',
      values: ['a', 'b', 'default'],
      labels: ['case a', 'case b', 'default'],
    });
    expect(edgeMarkOf(editor, { id: 'r', type: 'switch', config: {} })?.values).toEqual(['default']);
    expect(edgeMarkOf(editor, { id: 't', type: 'template', config: {} })).toEqual({
      key: 'branch',
      values: ['', 'true', 'false'],
      labels: ['always', 'when true', 'when false'],
    });
    expect(edgeMarkOf({ ...editor, branchValues: null }, { id: 't', type: 'template', config: {} })).toBeNull();
  });
});
