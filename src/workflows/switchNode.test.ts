// The switch node: its config and the edges out of it, checked when a workflow
// is saved (422 with every problem), and its typed comparisons (runs/compute/switchCase.ts).
import { describe, expect, it } from 'vitest';
import { validateWorkflowGraph } from './graph.ts';
import { holds, switchCase } from '../runs/compute/switchCase.ts';

const limits = { maxTokens: 4096 };
const graph = (config: Record<string, unknown>, edges: Record<string, unknown>[]) => ({
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'amount', type: 'number' } },
    { id: 'route', type: 'switch', config },
    { id: 'big', type: 'template', config: { template: 'big {{ nodes.route.output }}' } },
    { id: 'small', type: 'template', config: { template: 'small' } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [{ from: 'in', to: 'route' }, ...edges, { from: 'big', to: 'out' }, { from: 'small', to: 'out' }],
});
const problems = (g: { nodes: unknown; edges: unknown }) => validateWorkflowGraph(g.nodes, g.edges, limits);
const cases = [
  { name: 'large', operator: '>=', value: 1000 },
  { name: 'tiny', operator: '<', value: 10 },
];

describe('switch nodes when a workflow is saved', () => {
  it('accepts cases with typed values and edges naming a case or default', () => {
    expect(
      problems(
        graph({ value: 'nodes.in.output', cases }, [
          { from: 'route', to: 'big', case: 'large' },
          { from: 'route', to: 'small', case: 'default' },
        ]),
      ),
    ).toEqual([]);
  });

  it('refuses an edge out of a switch without case, one naming no case, and a case on an edge out of another node', () => {
    const g = graph({ cases }, [
      { from: 'route', to: 'big' },
      { from: 'route', to: 'small', case: 'huge' },
    ]);
    g.edges[0] = { from: 'in', to: 'route', case: 'large' };
    expect(problems(g)).toEqual([
      { pointer: '/edges/0/case', message: 'only an edge out of a switch node carries a case ("in" is a text_input)' },
      {
        pointer: '/edges/1',
        message: 'an edge out of switch "route" needs "case": one of its case names or "default"',
      },
      { pointer: '/edges/2/case', message: 'switch "route" has no case "huge"; its cases: large, tiny, default' },
    ]);
  });

  it('lets two cases lead to the same node (the edges differ by case)', () => {
    expect(
      problems(
        graph({ cases }, [
          { from: 'route', to: 'big', case: 'large' },
          { from: 'route', to: 'big', case: 'tiny' },
          { from: 'route', to: 'small', case: 'default' },
        ]),
      ),
    ).toEqual([]);
  });

  it('refuses a duplicate or reserved case name, a value the operator cannot use, and a pattern that does not compile', () => {
    const bad = [
      { name: 'a', operator: '==', value: 1 },
      { name: 'a', operator: 'empty', value: '' },
      { name: 'default', operator: 'in', value: 'x' },
      { name: 'b', operator: '>' },
      { name: 'c', operator: '<', value: { n: 1 } },
      { name: 'd', operator: 'matches', value: '(' },
    ];
    expect(
      problems(
        graph({ cases: bad }, [
          { from: 'route', to: 'big', case: 'a' },
          { from: 'route', to: 'small', case: 'default' },
        ]),
      ).map((p) => `${p.pointer} ${p.message}`),
    ).toEqual([
      '/nodes/1/config/cases/1/name duplicate case name "a" (also /cases/0)',
      '/nodes/1/config/cases/1/value is not used by the operator empty',
      '/nodes/1/config/cases/2/name must not be "default" (the edge for no case holding is named so)',
      '/nodes/1/config/cases/2/value must be a list for the operator in',
      '/nodes/1/config/cases/3/value is required by the operator >',
      '/nodes/1/config/cases/4/value must be a number or a string for the operator <',
      expect.stringMatching(/^\/nodes\/1\/config\/cases\/5\/value is not a valid regular expression: /),
    ]);
  });

  it("checks the value expression's references as a template's", () => {
    expect(
      problems(
        graph({ value: 'nodes.nowhere.output', cases }, [
          { from: 'route', to: 'big', case: 'large' },
          { from: 'route', to: 'small', case: 'default' },
        ]),
      ),
    ).toEqual([
      {
        pointer: '/nodes/1/config/value',
        message: '"nodes.nowhere.output": node "nowhere" is not upstream of this node (add an edge path from it)',
      },
    ]);
  });
});

describe('switch comparisons are typed', () => {
  it('compares numbers as numbers and strings by code point; other types never order', () => {
    expect(holds(1000, { name: 'x', operator: '>=', value: 1000 })).toBe(true);
    expect(holds(9, { name: 'x', operator: '<', value: 10 })).toBe(true);
    expect(holds('9', { name: 'x', operator: '<', value: 10 })).toBe(false);
    expect(holds('b', { name: 'x', operator: '>', value: 'a' })).toBe(true);
  });

  it('== is JSON equality (5 is not "5", key order does not matter); in, contains, matches, empty', () => {
    expect(holds(5, { name: 'x', operator: '==', value: '5' })).toBe(false);
    expect(holds({ a: 1, b: 2 }, { name: 'x', operator: '==', value: { b: 2, a: 1 } })).toBe(true);
    expect(holds('eu', { name: 'x', operator: 'in', value: ['us', 'eu'] })).toBe(true);
    expect(holds(['x', 'y'], { name: 'x', operator: 'contains', value: 'y' })).toBe(true);
    expect(holds({ urgent: true }, { name: 'x', operator: 'contains', value: 'urgent' })).toBe(true);
    expect(holds('INV-2041', { name: 'x', operator: 'matches', value: '^INV-\\d+$' })).toBe(true);
    expect(holds('  ', { name: 'x', operator: 'empty' })).toBe(true);
    expect(holds([], { name: 'x', operator: 'not_empty' })).toBe(false);
  });

  it('chooses the first case that holds, else default, over the expression or the upstream value', async () => {
    const scope = { inputs: {}, nodes: { extract: { output: { amount: 1500 } } } };
    expect(
      (await switchCase({ expression: 'nodes.extract.output.amount', scope, upstream: 'ignored', cases })).chosen,
    ).toBe('large');
    expect((await switchCase({ scope, upstream: 50, cases })).chosen).toBe('default');
    expect((await switchCase({ scope, upstream: 3, cases })).chosen).toBe('tiny');
  });
});
