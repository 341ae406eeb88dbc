import { describe, expect, it } from 'vitest';
import { fieldPaths, templateScopes } from './templateScope.ts';
import { validateWorkflowGraph } from './graph.ts';

// The ticket router: a text input, a structured llm_call, a switch, three outputs.
const nodes = [
  { id: 'ticket', type: 'text_input', config: { variable: 'ticket' } },
  {
    id: 'classify',
    type: 'llm_call',
    config: {
      model: 'echo',
      prompt: '{{ inputs.ticket }}',
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'ticket',
          schema: {
            type: 'object',
            properties: { category: { type: 'string' }, meta: { type: 'object', properties: { urgent: {} } } },
          },
        },
      },
    },
  },
  { id: 'route', type: 'switch', config: { value: 'nodes.classify.output.category', cases: [] } },
  { id: 'page', type: 'template', config: { template: 'x' } },
  { id: 'other', type: 'template', config: { template: 'y' } },
];
const edges = [
  { from: 'ticket', to: 'classify' },
  { from: 'classify', to: 'route' },
  { from: 'route', to: 'page', case: 'default' },
];
const RUN = ['run.id', 'run.created_at', 'workflow.id', 'workflow.version'];

describe('templateScopes', () => {
  const scopes = templateScopes(nodes, edges);

  it('offers the inputs, every upstream node with its declared fields, and the run fields', () => {
    expect(scopes.page).toEqual([
      'inputs.ticket',
      'nodes.route.output',
      'nodes.classify.output',
      'nodes.classify.output.category',
      'nodes.classify.output.meta',
      'nodes.classify.output.meta.urgent',
      'nodes.ticket.output',
      ...RUN,
    ]);
  });

  it('offers no node that is not upstream: a node with no edge in sees the inputs and the run', () => {
    expect(scopes.other).toEqual(['inputs.ticket', ...RUN]);
    expect(scopes.ticket).toEqual(['inputs.ticket', ...RUN]);
    expect(scopes.classify).toEqual(['inputs.ticket', 'nodes.ticket.output', ...RUN]);
  });

  it('a typed input offers its fields', () => {
    const typed = [
      {
        id: 'order',
        type: 'text_input',
        config: { variable: 'order', type: 'object', schema: { type: 'object', properties: { id: {}, total: {} } } },
      },
      { id: 't', type: 'template', config: { template: '' } },
    ];
    expect(templateScopes(typed, [{ from: 'order', to: 't' }]).t?.slice(0, 3)).toEqual([
      'inputs.order',
      'inputs.order.id',
      'inputs.order.total',
    ]);
  });

  it('each path offered passes the save’s template check', () => {
    const saved = nodes.map((n) => (n.id === 'page' ? { ...n, config: { template: '' } } : n));
    const page = saved.find((n) => n.id === 'page')!;
    page.config = { template: scopes.page!.map((p) => `{{ ${p} }}`).join(' ') };
    const problems = validateWorkflowGraph(saved, edges, { maxTokens: 1000, maxNodes: 50, maxItems: 100 });
    expect(problems.filter((p) => p.pointer === '/nodes/3/config/template')).toEqual([]);
  });

  it('skips what does not read as a node or an edge, and bounds the field list', () => {
    expect(templateScopes([null, 3, { id: 'a' }], 'nope')).toEqual({});
    const wide = { type: 'object', properties: Object.fromEntries([...Array(80)].map((_, i) => [`f${i}`, {}])) };
    expect(fieldPaths('x', wide)).toHaveLength(50);
    expect(fieldPaths('x', { properties: { 'not-a-name': {}, ok: {} } })).toEqual(['x', 'x.ok']);
  });
});
