import { describe, expect, it } from 'vitest';
import type { NodeTypeSpec } from '../../editorTypes.ts';
import type { Editor, Graph } from '../editor/model.ts';
import { autoLayout, flowEdges, flowNodes, handleOfEdge, markOfHandle, outHandlesOf, placeNew } from './flow.ts';
import { amend, canRedo, canUndo, record, redo, undo } from './history.ts';

// The canvas's rules that need no page: the handles a node has (from the registry's capabilities,
// whatever its type is called), what an edge drawn from one writes, where nodes stand, and the
// history's steps.

const spec = (type: string, more: Partial<NodeTypeSpec> = {}): NodeTypeSpec => ({
  type,
  label: type,
  config: { type: 'object' },
  ...more,
});
const specs = new Map(
  [
    spec('source', { noEdgeIn: true }),
    spec('router', { caseList: 'routes' }),
    spec('verdict', { branches: true }),
    spec('call', { routable: true }),
    spec('sink', { noEdgeOut: true }),
  ].map((s) => [s.type, s]),
);

describe("the canvas's graph", () => {
  it('gives each node the output handles its capabilities say, labelled', () => {
    const node = (type: string, config: Record<string, unknown> = {}) => ({ id: 'n', type, config });
    const routes = [{ name: 'urgent' }, { name: 'normal' }, { name: 'urgent' }, { other: 1 }];
    expect(outHandlesOf(specs.get('router'), node('router', { routes }))).toEqual([
      { id: 'case:urgent', label: 'urgent' },
      { id: 'case:normal', label: 'normal' },
      { id: 'case:default', label: 'default' },
    ]);
    expect(outHandlesOf(specs.get('verdict'), node('verdict')).map((h) => h.id)).toEqual([
      'branch:true',
      'branch:false',
    ]);
    expect(outHandlesOf(specs.get('call'), node('call')).map((h) => h.id)).toEqual(['out']);
    expect(outHandlesOf(specs.get('call'), node('call', { on_error: 'continue' })).map((h) => h.id)).toEqual([
      'out',
      'case:error',
    ]);
    expect(outHandlesOf(specs.get('sink'), node('sink'))).toEqual([]);
    expect(outHandlesOf(undefined, node('unknown')).map((h) => h.id)).toEqual(['out']);
  });

  it('writes what an edge drawn from a handle carries, and reads it back', () => {
    expect(markOfHandle('case:urgent')).toEqual({ case: 'urgent' });
    expect(markOfHandle('branch:false')).toEqual({ branch: 'false' });
    expect(markOfHandle('out')).toEqual({});
    expect(markOfHandle(null)).toEqual({});
    expect(markOfHandle(handleOfEdge({ from: 'a', to: 'b', case: 'error' }))).toEqual({ case: 'error' });
    expect(markOfHandle(handleOfEdge({ from: 'a', to: 'b', branch: 'true' }))).toEqual({ branch: 'true' });
    expect(markOfHandle(handleOfEdge({ from: 'a', to: 'b' }))).toEqual({});
  });

  const graph: Graph = {
    nodes: [
      { id: 'in', type: 'source', config: {} },
      { id: 'route', type: 'router', config: { routes: [{ name: 'urgent' }] } },
      { id: 'out', type: 'sink', config: {}, ui: { x: 900, y: 40 } },
    ],
    edges: [
      { from: 'in', to: 'route' },
      { from: 'route', to: 'out', case: 'urgent' },
      { from: 'route', to: 'out', case: 'gone' },
    ],
  };

  it('places nodes at their ui, the others left to right by the auto-layout', () => {
    const places = autoLayout(graph, specs);
    expect(places.get('in')!.x).toBeLessThan(places.get('route')!.x);
    expect(places.get('route')!.x).toBeLessThan(places.get('out')!.x);
    const nodes = flowNodes({
      graph,
      specs,
      selected: new Set(['route']),
      current: 'in',
      problemsOf: () => 0,
      run: null,
    });
    expect(nodes.map((n) => n.position)).toEqual([places.get('in'), places.get('route'), { x: 900, y: 40 }]);
    expect(nodes.map((n) => [n.selected, n.data.current, n.data.input])).toEqual([
      [false, true, false],
      [true, false, true],
      [false, false, true],
    ]);
  });

  it('draws edges from their case’s handle with its label, one whose case is gone saying so, the case a run took marked', () => {
    const run = { id: 'run_1', nodes: { route: { status: 'completed', case: 'urgent' } } };
    const nodes = flowNodes({ graph, specs, selected: new Set(), current: null, problemsOf: () => 0, run });
    expect(nodes[1]!.data.run).toEqual({ status: 'completed', case: 'urgent' });
    const edges = flowEdges(graph, nodes, run);
    expect(edges.map((e) => [e.sourceHandle, e.label, e.className])).toEqual([
      ['out', undefined, ''],
      ['case:urgent', 'urgent', 'taken'],
      ['case:urgent', 'gone (none such)', ''],
    ]);
    expect(new Set(edges.map((e) => e.id)).size).toBe(3);
  });

  it('puts a node added from the palette right of the selected one, lower while that place is taken', () => {
    const nodes = flowNodes({ graph, specs, selected: new Set(), current: null, problemsOf: () => 0, run: null });
    const out = nodes[2]!;
    expect(placeNew(nodes, 'out', { x: 0, y: 0 })).toEqual({ x: out.position.x + 260, y: out.position.y });
    const beside = [...nodes, { ...out, id: 'next', position: { x: out.position.x + 260, y: out.position.y } }];
    expect(placeNew(beside, 'out', { x: 0, y: 0 })).toEqual({ x: out.position.x + 260, y: out.position.y + 100 });
    expect(placeNew([], null, { x: 500, y: 300 })).toEqual({ x: 400, y: 270 });
  });
});

describe("the canvas's history", () => {
  it('takes each change as a step, undoes and redoes them, and forgets the redo on a new change', () => {
    const editor = { jsonArea: { value: 'a' }, render: () => {}, schedulePreview: () => {} } as unknown as Editor;
    editor.schedulePreview = () => record(editor);
    record(editor);
    expect(canUndo(editor)).toBe(false);
    for (const text of ['b', 'c']) {
      editor.jsonArea.value = text;
      record(editor);
    }
    editor.jsonArea.value = 'c2';
    amend(editor); // folded into the step 'c'
    expect(undo(editor)).toBe(true);
    expect(editor.jsonArea.value).toBe('b');
    expect(undo(editor)).toBe(true);
    expect(editor.jsonArea.value).toBe('a');
    expect(undo(editor)).toBe(false);
    expect(redo(editor)).toBe(true);
    expect(editor.jsonArea.value).toBe('b');
    editor.jsonArea.value = 'd';
    record(editor);
    expect(canRedo(editor)).toBe(false);
    expect(undo(editor)).toBe(true);
    expect(editor.jsonArea.value).toBe('b');
    expect(redo(editor)).toBe(true);
    expect(editor.jsonArea.value).toBe('d');
  });
});
