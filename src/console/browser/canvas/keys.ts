import type { Edge } from '@xyflow/react';
import type { KeyboardEvent } from 'react';
import type { Editor } from '../editor/model.ts';
import { copyNodes, layoutAll, pasteNodes, removeSelection, type Copied } from './edits.ts';
import { edgeIdOf, type CanvasNode } from './flow.ts';
import { redo, undo } from './history.ts';
import type { CanvasStore } from './store.ts';

// The canvas's commands, by key (while the focus is in the canvas) and by the toolbar's buttons:
// Delete (or Backspace) removes the selection, Ctrl/Cmd+A selects every node, Ctrl/Cmd+C and +V
// copy and paste the selection, Ctrl/Cmd+Z undoes, Ctrl+Shift+Z and Ctrl+Y redo.

/** The selected nodes (by id) and edges (by their index in the graph). */
export interface Selection {
  nodes: ReadonlySet<string>;
  edges: ReadonlySet<string>;
}

export const selectionOf = (nodes: readonly CanvasNode[], edges: readonly Edge[]): Selection => ({
  nodes: new Set(nodes.filter((n) => n.selected).map((n) => n.id)),
  edges: new Set(edges.filter((e) => e.selected).map((e) => e.id)),
});

export interface CanvasCommands {
  remove(): void;
  copy(): void;
  paste(): void;
  undo(): void;
  redo(): void;
  layout(): void;
  selectAll(): void;
  onKeyDown(event: KeyboardEvent): void;
}

/** Not while typing in a field: its own keys (a text's undo, a Backspace) stay its own. */
const inField = (target: EventTarget) =>
  target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));

let clipboard: Copied | null = null;

/** `fit`: shows every node (after an auto-layout, which may have moved them out of the view). */
export function canvasKeys(
  editor: Editor,
  store: CanvasStore,
  selection: () => Selection,
  fit: () => void,
): CanvasCommands {
  const commands: Omit<CanvasCommands, 'onKeyDown'> = {
    remove() {
      const { nodes, edges } = selection();
      const all = editor.state.graph?.edges ?? [];
      const indexes = new Set(all.flatMap((e, i) => (edges.has(edgeIdOf(e)) ? [i] : [])));
      removeSelection(editor, nodes, indexes);
    },
    copy() {
      if (editor.state.graph) clipboard = copyNodes(editor.state.graph, selection().nodes) ?? clipboard;
    },
    paste() {
      if (!clipboard || !editor.state.graph) return;
      const ids = pasteNodes(editor, clipboard);
      store.selectNext(ids);
      store.bump();
    },
    undo: () => void undo(editor),
    redo: () => void redo(editor),
    layout() {
      if (!editor.state.graph) return;
      layoutAll(editor);
      fit();
    },
    selectAll() {
      store.selectNext(editor.state.graph?.nodes.map((n) => n.id) ?? []);
      store.bump();
    },
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (inField(event.target) || !editor.state.graph) return;
    const mod = event.ctrlKey || event.metaKey;
    const key = event.key.toLowerCase();
    let run: (() => void) | null = null;
    if (!mod && (event.key === 'Delete' || event.key === 'Backspace')) run = commands.remove;
    else if (mod && key === 'c') run = commands.copy;
    else if (mod && key === 'v') run = commands.paste;
    else if (mod && key === 'z') run = event.shiftKey ? commands.redo : commands.undo;
    else if (mod && key === 'y') run = commands.redo;
    else if (mod && key === 'a') run = commands.selectAll;
    if (!run) return;
    event.preventDefault();
    run();
  };
  return { ...commands, onKeyDown };
}
