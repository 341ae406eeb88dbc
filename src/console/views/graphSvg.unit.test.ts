import { describe, expect, it } from 'vitest';
import type { WorkflowEdge, WorkflowNode } from '../../workflows/graph.ts';
import { graphSvg, layoutGraph } from './graphSvg.ts';

// The workflow picture: a layered layout (each node one row below its deepest predecessor, rows
// ordered against crossings) and an SVG whose every text is escaped.

const node = (id: string, type: WorkflowNode['type'] = 'template'): WorkflowNode =>
  ({ id, type, config: type === 'text_input' ? { variable: id } : { template: 'x' } }) as WorkflowNode;

describe('layoutGraph', () => {
  it('puts each node one row below its deepest predecessor, however the body orders them', () => {
    const nodes = [node('out'), node('b'), node('a'), node('in', 'text_input')];
    const edges: WorkflowEdge[] = [
      { from: 'in', to: 'a' },
      { from: 'a', to: 'b' },
      { from: 'in', to: 'out' },
      { from: 'b', to: 'out' },
    ];
    const layers = Object.fromEntries(layoutGraph(nodes, edges).nodes.map((p) => [p.node.id, p.layer]));
    expect(layers).toEqual({ in: 0, a: 1, b: 2, out: 3 });
  });

  it('orders a row by its parents so two parallel chains do not cross', () => {
    // Chains x1 -> x2 and y1 -> y2, with the second row listed the other way round.
    const nodes = [node('x1', 'text_input'), node('y1', 'text_input'), node('y2'), node('x2')];
    const edges: WorkflowEdge[] = [
      { from: 'x1', to: 'x2' },
      { from: 'y1', to: 'y2' },
    ];
    const at = new Map(layoutGraph(nodes, edges).nodes.map((p) => [p.node.id, p]));
    expect(Math.sign(at.get('x2')!.x - at.get('y2')!.x)).toBe(Math.sign(at.get('x1')!.x - at.get('y1')!.x));
  });

  it('lays out a cycle (never stored, but never looped on either) below the rest', () => {
    const layout = layoutGraph(
      [node('a'), node('b'), node('c')],
      [
        { from: 'b', to: 'c' },
        { from: 'c', to: 'b' },
      ],
    );
    expect(layout.nodes.map((p) => p.layer).sort()).toEqual([0, 1, 2]);
  });
});

describe('graphSvg', () => {
  it('escapes the title and marks branches, types and run statuses', () => {
    const svg = String(
      graphSvg(
        [
          node('in', 'text_input'),
          { id: 'check', type: 'condition', config: { left: 'a', operator: 'not_empty' } } as WorkflowNode,
          node('yes'),
          node('no'),
        ],
        [
          { from: 'in', to: 'check' },
          { from: 'check', to: 'yes', branch: 'true' },
          { from: 'check', to: 'no', branch: 'false' },
        ],
        { title: 'A <b>"graph"</b>', statuses: new Map([['no', 'skipped']]) },
      ),
    );
    expect(svg).toContain('aria-label="A &lt;b&gt;&quot;graph&quot;&lt;/b&gt;"');
    expect(svg.match(/<text class="branch branch-(true|false)"/g)).toHaveLength(2);
    expect(svg).toContain('class="node type-condition"');
    expect(svg).toContain('class="node type-template status-skipped" data-node="no"');
    expect(svg).toContain('template · skipped');
    expect(svg.match(/marker-end="url\(#arrow\)"/g)).toHaveLength(3);
  });

  it("has a text equivalent for screen readers: each edge in words, true/false on a condition's edges, nodes without edges", () => {
    const out = String(
      graphSvg(
        [
          node('question', 'text_input'),
          { id: 'answer', type: 'llm_call', config: { model: 'echo' } } as WorkflowNode,
          { id: 'check', type: 'condition', config: { left: 'a', operator: 'not_empty' } } as WorkflowNode,
          node('yes'),
          node('no'),
          node('<alone>'),
        ],
        [
          { from: 'question', to: 'answer' },
          { from: 'answer', to: 'check' },
          { from: 'check', to: 'yes', branch: 'true' },
          { from: 'check', to: 'no', branch: 'false' },
        ],
        { title: 'Q' },
      ),
    );
    const list = /<ul class="visually-hidden graph-edges" aria-label="([^"]*)">(.*?)<\/ul>/s.exec(out);
    expect(list?.[1]).toBe('Q, as text: 4 edges');
    expect([...list![2]!.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1])).toEqual([
      'text_input &quot;question&quot; → llm_call &quot;answer&quot;',
      'llm_call &quot;answer&quot; → condition &quot;check&quot;',
      'condition &quot;check&quot; when true → template &quot;yes&quot;',
      'condition &quot;check&quot; when false → template &quot;no&quot;',
      'template &quot;&lt;alone&gt;&quot;, no edges',
    ]);
  });
});

describe('graphSvg edge labels', () => {
  it("labels a switch's edges with their case, in the picture and in its text", () => {
    const markup = String(
      graphSvg(
        [node('in', 'text_input'), node('route'), node('a'), node('b')],
        [
          { from: 'in', to: 'route' },
          { from: 'route', to: 'a', case: 'urgent' },
          { from: 'route', to: 'b', case: 'default' },
        ],
        { title: 'Routed' },
      ),
    );
    expect(markup).toContain('data-from="route" data-to="a" data-branch="" data-case="urgent"');
    expect(markup).toMatch(/<text class="branch edge-case"[^>]*>urgent<\/text>/);
    expect(markup).toMatch(/<text class="branch edge-case"[^>]*>default<\/text>/);
    expect(markup).toMatch(/route&quot; case urgent → /);
  });
});
