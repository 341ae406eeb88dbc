import { ReactFlowProvider } from '@xyflow/react';
import { createRoot } from 'react-dom/client';
import { make } from '../dom.ts';
import type { Editor, WatchedRun } from '../editor/model.ts';
import { Canvas } from './Canvas.tsx';
import { canvasStore } from './store.ts';

// Puts the canvas on the editor page in place of the server-drawn picture (which stays in the page
// without script, and under the canvas's heading for nothing else). Returns what redraws it: the
// builder calls it on every redraw; a watched run's statuses redraw it on the `editor-run` event.

const isWatchedRun = (value: unknown): value is WatchedRun =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as WatchedRun).id === 'string' &&
  typeof (value as WatchedRun).nodes === 'object' &&
  (value as WatchedRun).nodes !== null;

export function mountCanvas(editor: Editor): () => void {
  const store = canvasStore();
  // The library's own stylesheet (its package's exported one), served beside app.css.
  if (!document.querySelector('link[data-canvas-css]'))
    document.head.append(make('link', { rel: 'stylesheet', href: '/assets/canvas.css', 'data-canvas-css': true }));
  const picture = document.querySelector<HTMLElement>('[data-preview-graph]');
  if (picture) picture.hidden = true;
  const host = make('div', { className: 'canvas-host', 'data-canvas': true });
  const section = make(
    'section',
    { id: 'canvas-section', className: 'canvas-section', 'aria-labelledby': 'canvas-heading' },
    make('h2', { id: 'canvas-heading', text: 'Canvas' }),
    host,
  );
  editor.root.before(section);
  // Whoever watches a run sets `editor.state.run` and says so with this event (or hands the run as its detail).
  editor.root.addEventListener('editor-run', (event) => {
    const detail = (event as CustomEvent<unknown>).detail;
    if (isWatchedRun(detail)) editor.state.run = detail;
    store.bump();
  });
  editor.root.addEventListener('editor-problems', () => store.bump());
  createRoot(host).render(
    <ReactFlowProvider>
      <Canvas editor={editor} store={store} />
    </ReactFlowProvider>,
  );
  return () => store.bump();
}
