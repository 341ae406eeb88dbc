import type { Editor } from '../editor/model.ts';
import { canRedo, canUndo } from './history.ts';
import type { CanvasCommands } from './keys.ts';
import type { CanvasStore } from './store.ts';

// The canvas's commands as buttons, for the mouse and for the keyboard outside the canvas:
// undo, redo, auto-layout, copy, paste and delete the selection.

export function Toolbar({ editor, keys }: { editor: Editor; store: CanvasStore; keys: CanvasCommands }) {
  const graph = editor.state.graph;
  return (
    <div className="canvas-toolbar" role="toolbar" aria-label="Canvas">
      <button
        type="button"
        id="canvas-undo"
        onClick={keys.undo}
        disabled={!canUndo(editor)}
        aria-keyshortcuts="Control+Z"
      >
        Undo
      </button>
      <button
        type="button"
        id="canvas-redo"
        onClick={keys.redo}
        disabled={!canRedo(editor)}
        aria-keyshortcuts="Control+Shift+Z Control+Y"
      >
        Redo
      </button>
      <button type="button" id="canvas-layout" onClick={keys.layout} disabled={!graph?.nodes.length}>
        Auto-layout
      </button>
      <button type="button" id="canvas-copy" onClick={keys.copy} aria-keyshortcuts="Control+C">
        Copy
      </button>
      <button type="button" id="canvas-paste" onClick={keys.paste} aria-keyshortcuts="Control+V">
        Paste
      </button>
      <button type="button" id="canvas-delete" className="danger" onClick={keys.remove} aria-keyshortcuts="Delete">
        Delete selected
      </button>
    </div>
  );
}
