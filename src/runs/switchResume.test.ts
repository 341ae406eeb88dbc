// A run taken over after its switch ended (a resumed run, with a switch): the switch
// is not logged again, its case is chosen again from the restored values (a pure computation),
// and typed outputs come back as values, not as their JSON text.
import { describe, expect, it } from 'vitest';
import { executeGraph, type Graph } from './executor.ts';
import { createModelRouter } from './providers/index.ts';

describe('resuming after a switch', () => {
  it('follows the case chosen from the restored value, and runs only what was not finished', async () => {
    const graph: Graph = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'order', type: 'object' } },
        {
          id: 'route',
          type: 'switch',
          config: { value: 'nodes.in.output.amount', cases: [{ name: 'large', operator: '>=', value: 1000 }] },
        },
        { id: 'big', type: 'template', config: { template: 'big {{ nodes.route.output.amount }}' } },
        { id: 'small', type: 'template', config: { template: 'small' } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'in', to: 'route' },
        { from: 'route', to: 'big', case: 'large' },
        { from: 'route', to: 'small', case: 'default' },
        { from: 'big', to: 'out' },
        { from: 'small', to: 'out' },
      ],
    };
    const ran: string[] = [];
    const order = { amount: 1500 };
    const resumed = new Map<string, unknown>([
      ['in', order],
      ['route', order],
    ]);
    const result = await executeGraph(graph, { order }, createModelRouter({}), {
      resumed,
      hooks: { onStepStart: (n) => void ran.push(n.id) },
    });
    expect(result.output).toEqual({ out: 'big 1500' });
    expect(ran).toEqual(['big', 'out']);
  });
});
