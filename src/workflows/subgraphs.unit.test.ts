// Save-time rules of split, map and workflow nodes: each problem is one
// item of the one 422, a map body's problems pointing into the body.
import { describe, expect, it } from 'vitest';
import { validateWorkflowGraph } from './graph.ts';
import { workflowReferences } from './subgraphs.ts';

const limits = { maxTokens: 4096 };

const body = {
  nodes: [
    { id: 'chunk', type: 'text_input', config: { variable: 'item' } },
    { id: 'sum', type: 'llm_call', config: { model: 'echo', prompt: 'Summarise {{ inputs.item }}' } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'chunk', to: 'sum' },
    { from: 'sum', to: 'out' },
  ],
};

function graph(split: Record<string, unknown>, map: Record<string, unknown>, extraEdges: unknown[] = []) {
  return {
    nodes: [
      { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
      { id: 'parts', type: 'split', config: split },
      { id: 'each', type: 'map', config: map },
      { id: 'result', type: 'text_output', config: { format: 'json' } },
    ],
    edges: [{ from: 'doc', to: 'parts' }, { from: 'parts', to: 'each' }, { from: 'each', to: 'result' }, ...extraEdges],
  };
}

const problems = (g: { nodes: unknown; edges: unknown }) => validateWorkflowGraph(g.nodes, g.edges, limits);

describe('split, map and workflow nodes at save time', () => {
  it('accepts a split feeding a map with a body, and a map or workflow node calling a workflow', () => {
    expect(
      problems(
        graph(
          { by: 'tokens', size: 500, overlap: 50 },
          { body, concurrency: 4, on_item_error: 'default', default: '' },
        ),
      ),
    ).toEqual([]);
    expect(
      problems(graph({ by: 'separator', separator: '\n' }, { workflow_id: 'wf_x', item_variable: 'chunk' })),
    ).toEqual([]);
    const call = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
        { id: 'triage', type: 'workflow', config: { workflow_id: 'wf_t', inputs: { ticket: '{{ inputs.ticket }}' } } },
        { id: 'out', type: 'text_output', config: { format: 'json' } },
      ],
      edges: [{ from: 'triage', to: 'out' }],
    };
    expect(problems(call)).toEqual([]);
  });

  it('refuses split options that do not go with its `by`, and an overlap not below the size', () => {
    expect(problems(graph({ by: 'characters', separator: ',', size: 10, overlap: 10 }, { body }))).toEqual([
      { pointer: '/nodes/1/config/separator', message: 'is used only with "by": "separator"' },
      { pointer: '/nodes/1/config/overlap', message: 'must be less than size (10)' },
    ]);
    expect(problems(graph({ by: 'separator', size: 10 }, { body }))).toEqual([
      { pointer: '/nodes/1/config/size', message: 'is used only with "by": "characters" or "tokens"' },
    ]);
    expect(problems(graph({ by: 'lines' }, { body }))).toEqual([
      { pointer: '/nodes/1/config/by', message: 'must be one of separator, characters, tokens' },
    ]);
  });

  it('a map takes exactly one edge in, and exactly one of body and workflow_id', () => {
    expect(problems(graph({ by: 'tokens' }, { body }, [{ from: 'doc', to: 'each' }]))).toContainEqual({
      pointer: '/nodes/2',
      message: expect.stringContaining('needs exactly one edge into it'),
    });
    expect(problems(graph({ by: 'tokens' }, {}))).toContainEqual({
      pointer: '/nodes/2/config',
      message: 'needs body (the sub-graph run for each item) or workflow_id',
    });
    expect(problems(graph({ by: 'tokens' }, { body, workflow_id: 'wf_x' }))).toContainEqual({
      pointer: '/nodes/2/config',
      message: 'give body or workflow_id, not both',
    });
    expect(problems(graph({ by: 'tokens' }, { body, default: 'x' }))).toContainEqual({
      pointer: '/nodes/2/config/default',
      message: 'is used only with "on_item_error": "default"',
    });
    // A null default reads as absent (generated clients send it for a field left unset).
    expect(problems(graph({ by: 'tokens' }, { body, default: null })).map((p) => p.pointer)).not.toContain(
      '/nodes/2/config/default',
    );
  });

  it("a map body's problems point into the body: its graph rules, its inputs (item, index) and its text_output", () => {
    const bad = {
      nodes: [
        { id: 'chunk', type: 'text_input', config: { variable: 'ticket' } },
        { id: 'sum', type: 'llm_call', config: { model: 'echo', prompt: '{{ nodes.nowhere.output }}', colour: 'red' } },
      ],
      edges: [{ from: 'chunk', to: 'sum' }],
    };
    expect(problems(graph({ by: 'tokens' }, { body: bad }))).toEqual([
      { pointer: '/nodes/2/config/body/nodes/1/config/colour', message: 'unknown property "colour"' },
      {
        pointer: '/nodes/2/config/body/nodes/1/config/prompt',
        message: expect.stringContaining('"nowhere" is not upstream'),
      },
      {
        pointer: '/nodes/2/config/body/nodes/0/config/variable',
        message: 'a map body\'s inputs are "item" (the item) and "index" (its position from 0)',
      },
      {
        pointer: '/nodes/2/config/body/nodes',
        message: "a map body needs a text_output: its value is the item's result",
      },
    ]);
  });

  it('map bodies nest two deep at most', () => {
    const inner = {
      ...graph({ by: 'tokens' }, { body }),
      nodes: graph({ by: 'tokens' }, { body }).nodes.map((n) =>
        n.id === 'doc' ? { ...n, config: { variable: 'item' } } : n,
      ),
    };
    expect(problems(graph({ by: 'tokens' }, { body: inner }))).toEqual([]);
    const deeper = {
      ...inner,
      nodes: inner.nodes.map((n) => (n.id === 'each' ? { ...n, config: { body: inner } } : n)),
    };
    expect(problems(graph({ by: 'tokens' }, { body: deeper }))).toContainEqual({
      pointer: '/nodes/2/config/body/nodes/2/config/body/nodes/2/config/body',
      message: 'map bodies nest at most 2 deep: call a workflow (workflow_id) from here instead',
    });
  });

  it('a split or a workflow with no edge in and no template; a workflow node with inputs of unknown names', () => {
    const lone = {
      nodes: [
        { id: 'parts', type: 'split', config: { by: 'tokens' } },
        { id: 'call', type: 'workflow', config: { workflow_id: 'wf_t', inputs: { a: '{{ inputs.missing }}' } } },
        { id: 'out', type: 'text_output', config: { format: 'json' } },
      ],
      edges: [{ from: 'call', to: 'out' }],
    };
    expect(problems(lone)).toEqual([
      {
        pointer: '/nodes/0',
        message: 'split "parts" has no upstream node: connect an edge into it, or give it a text',
      },
      { pointer: '/nodes/1/config/inputs/a', message: '"inputs.missing": no text_input has the variable "missing"' },
    ]);
  });

  it('lists the workflows a graph calls, inside map bodies too', () => {
    const nested = {
      nodes: [...body.nodes, { id: 'inner', type: 'map', config: { workflow_id: 'wf_b' } }],
      edges: body.edges,
    };
    const g = graph({ by: 'tokens' }, { body: nested });
    g.nodes.push({ id: 'call', type: 'workflow', config: { workflow_id: 'wf_a' } } as never);
    expect(workflowReferences(g.nodes)).toEqual([
      {
        workflowId: 'wf_b',
        pointer: '/nodes/2/config/body/nodes/3/config/workflow_id',
        inputs: {
          named: [{ variable: 'item', pointer: '/nodes/2/config/body/nodes/3/config/workflow_id' }],
          optional: ['index'],
          pointer: '/nodes/2/config/body/nodes/3/config/workflow_id',
        },
      },
      {
        workflowId: 'wf_a',
        pointer: '/nodes/4/config/workflow_id',
        inputs: { named: [], passThrough: true, pointer: '/nodes/4/config' },
      },
    ]);
  });

  it("says how each call fills the callee's inputs: a workflow node's mapped names, a map's item_variable", () => {
    const calls = workflowReferences([
      { id: 'call', type: 'workflow', config: { workflow_id: 'wf_a', version: 2, inputs: { 'a/b': 'x', c: 'y' } } },
      { id: 'each', type: 'map', config: { workflow_id: 'wf_b', item_variable: 'chunk' } },
    ]);
    expect(calls.map((c) => [c.version, c.inputs])).toEqual([
      [
        2,
        {
          named: [
            { variable: 'a/b', pointer: '/nodes/0/config/inputs/a~1b' },
            { variable: 'c', pointer: '/nodes/0/config/inputs/c' },
          ],
          passThrough: false,
          pointer: '/nodes/0/config/inputs',
        },
      ],
      [
        undefined,
        {
          named: [{ variable: 'chunk', pointer: '/nodes/1/config/item_variable' }],
          optional: ['index'],
          pointer: '/nodes/1/config/workflow_id',
        },
      ],
    ]);
  });
});
