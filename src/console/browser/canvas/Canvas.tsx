import {
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  Controls,
  ReactFlow,
  useReactFlow,
  type Edge,
  type EdgeChange,
  type NodeChange,
} from '@xyflow/react';
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { problemsOf, type Editor } from '../editor/model.ts';
import { addNodeAt, connectHandle, moveNodes } from './edits.ts';
import { flowEdges, flowNodes, placeNew, type CanvasNode } from './flow.ts';
import { canvasKeys, selectionOf, type Selection } from './keys.ts';
import { NodeBox } from './NodeBox.tsx';
import { Palette } from './Palette.tsx';
import type { CanvasStore } from './store.ts';
import { Toolbar } from './Toolbar.tsx';

// The canvas: the graph drawn with @xyflow/react, nodes dragged (their place written as `ui` when
// the drag ends), pan and zoom, edges drawn from labelled output handles, a node clicked shows its
// form in the builder below, shift-click and shift-drag select several. Redrawn from the JSON text
// whenever the builder redraws (the store's version), keeping what is selected.

const nodeTypes = { box: NodeBox };

/** `next`, each item that is drawn as its current one is (every field `next` sets is equal) being that one. */
function kept<T extends { id: string }>(current: T[], next: T[]): T[] {
  const drawn = new Map(current.map((item) => [item.id, item]));
  const same = (old: T, item: T) =>
    Object.keys(item).every((k) => JSON.stringify(old[k as keyof T]) === JSON.stringify(item[k as keyof T]));
  return next.map((item) => {
    const old = drawn.get(item.id);
    return old && same(old, item) ? old : item;
  });
}

function useFlow(editor: Editor, store: CanvasStore) {
  const version = useSyncExternalStore(store.subscribe, store.version);
  const [nodes, setNodes] = useState<CanvasNode[]>([]);
  const [edges, setEdges] = useState<Edge[]>([]);
  const picked = useRef<Selection>({ nodes: new Set(), edges: new Set() });
  useEffect(() => {
    const graph = editor.state.graph;
    const { state } = editor;
    // A paste selects what it pasted, and nothing else.
    const taken = store.takeSelection();
    const selected = taken ?? picked.current.nodes;
    const next = graph
      ? flowNodes({
          graph,
          specs: editor.typeSpec,
          selected,
          current: state.selected,
          problemsOf: (n) => problemsOf(graph, state.problems, n).length,
          run: state.run,
        })
      : [];
    const nextEdges = graph ? flowEdges(graph, next, state.run) : [];
    for (const e of nextEdges) e.selected = !taken && picked.current.edges.has(e.id);
    // A node or edge drawn as before keeps its object: the library then keeps what it measured of it
    // (its handles), so a redraw that changed nothing of it (a preview's answer) cannot end a drag.
    setNodes((current) => kept(current, next));
    setEdges((current) => kept(current, nextEdges));
    picked.current = selectionOf(next, nextEdges);
  }, [editor, store, version]);
  const onNodesChange = useCallback(
    (changes: NodeChange<CanvasNode>[]) => {
      // A move that is not a drag in progress (arrow keys on a focused node, a drag's end) is written as `ui`.
      const moved = new Map(
        changes.flatMap((c) =>
          c.type === 'position' && c.dragging === false && c.position ? [[c.id, c.position]] : [],
        ),
      );
      if (moved.size) queueMicrotask(() => moveNodes(editor, moved));
      setNodes((current) => {
        const next = applyNodeChanges(
          changes.filter((c) => c.type !== 'remove'),
          current,
        );
        picked.current = { ...picked.current, nodes: new Set(next.filter((n) => n.selected).map((n) => n.id)) };
        return next;
      });
    },
    [editor],
  );
  const onEdgesChange = useCallback((changes: EdgeChange[]) => {
    setEdges((current) => {
      const next = applyEdgeChanges(
        changes.filter((c) => c.type !== 'remove'),
        current,
      );
      picked.current = { ...picked.current, edges: new Set(next.filter((e) => e.selected).map((e) => e.id)) };
      return next;
    });
  }, []);
  return { nodes, edges, picked, onNodesChange, onEdgesChange };
}

export function Canvas({ editor, store }: { editor: Editor; store: CanvasStore }) {
  const flow = useFlow(editor, store);
  const view = useReactFlow();
  const box = useRef<HTMLDivElement>(null);
  const place = () => {
    const rect = box.current?.getBoundingClientRect();
    const centre = rect
      ? view.screenToFlowPosition({ x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 })
      : { x: 0, y: 0 };
    return placeNew(flow.nodes, editor.state.selected, centre);
  };
  // After the redraw the layout asks for (two frames: drawn, then measured).
  const fit = () =>
    requestAnimationFrame(() => requestAnimationFrame(() => void view.fitView({ maxZoom: 1, padding: 0.2 })));
  const keys = canvasKeys(editor, store, () => flow.picked.current, fit);
  return (
    <>
      <div className="canvas-bar">
        <Palette
          types={editor.schemas.nodeTypes}
          onAdd={(type) => {
            addNodeAt(editor, type, place());
            fit();
          }}
        />
        <Toolbar editor={editor} store={store} keys={keys} />
      </div>
      <div
        className="canvas"
        ref={box}
        onKeyDown={keys.onKeyDown}
        // Focusable, so that a click on the pane takes the keys (Delete, Ctrl+Z...) to it.
        tabIndex={0}
        role="group"
        aria-label="Canvas: drag nodes to place them, drag from an output to an input to connect; Delete removes the selection, Ctrl+C and Ctrl+V copy, Ctrl+Z undoes"
      >
        <ReactFlow
          nodes={flow.nodes}
          edges={flow.edges}
          nodeTypes={nodeTypes}
          onNodesChange={flow.onNodesChange}
          onEdgesChange={flow.onEdgesChange}
          onConnect={(c) => connectHandle(editor, c.source, c.sourceHandle, c.target)}
          isValidConnection={(c) => c.source !== c.target}
          onNodeDragStop={(_event, _node, dragged) =>
            moveNodes(editor, new Map(dragged.map((n) => [n.id, n.position])))
          }
          onSelectionChange={({ nodes }) => {
            // One node selected (a click, or Enter on a focused node): the builder shows its form.
            const [only] = nodes;
            if (nodes.length !== 1 || !only || editor.state.selected === only.id) return;
            editor.state.selected = only.id;
            editor.render();
          }}
          onError={(code, message) => {
            // 008: an edge drawn before its node's new handle was measured (a case being renamed);
            // it shows once the handle is there. Anything else is the library's warning as it is.
            if (code !== '008') console.warn(message);
          }}
          deleteKeyCode={null}
          multiSelectionKeyCode={['Shift', 'Meta', 'Control']}
          selectionKeyCode="Shift"
          fitView
          fitViewOptions={{ maxZoom: 1, padding: 0.2 }}
          minZoom={0.2}
          maxZoom={2}
        >
          <Background />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
    </>
  );
}
