// The workflow editor's builder (/assets/editor.js, on /workflows/new and /workflows/{id}/edit):
// a canvas (canvas/, @xyflow/react) in place of the server-drawn picture, with undo and redo, and
// a palette of every node type the contract has (a choice and an Add button), a form per node built
// from its config schema (editor/fields.ts), edges added from a "connect" control or drawn on the
// picture by dragging from one box to another, removed from their list or by clicking them on the
// picture. The keyboard reaches all of it (the picture's boxes are links). The JSON text below
// stays the form's one field: the builder writes it, and typing in it redraws the builder. Without
// script the page is the plain form, which saves the same JSON.
import type { EditorSchemas } from '../editorTypes.ts';
import { record } from './canvas/history.ts';
import { mountCanvas } from './canvas/mount.tsx';
import { render, renderLists } from './editor/builder.ts';
import type { Editor } from './editor/model.ts';
import { livePreview } from './editor/preview.ts';
import { startRunPanel } from './editor/runPanel.ts';

function startEditor(root: HTMLElement, schemasBlock: HTMLElement, jsonArea: HTMLTextAreaElement): void {
  const schemas = JSON.parse(schemasBlock.textContent ?? '') as EditorSchemas;
  const branch = schemas.edge.properties?.branch;
  const editor: Editor = {
    root,
    jsonArea,
    schemas,
    typeSpec: new Map(schemas.nodeTypes.map((t) => [t.type, t])),
    branchValues: (branch?.enum as string[] | undefined) ?? null,
    state: {
      graph: null,
      selected: null,
      problems: [],
      from: null,
      to: null,
      adding: schemas.nodeTypes[0]?.type,
      run: null,
    },
    render: () => {
      render(editor);
      redrawCanvas();
    },
    renderLists: () => {
      renderLists(editor);
      redrawCanvas();
    },
    // Every change the builder writes asks for a preview: each is also a step of the history.
    schedulePreview: () => {
      record(editor);
      live.schedule();
    },
  };
  const live = livePreview(editor);
  const redrawCanvas = mountCanvas(editor);
  record(editor); // the text as the page came: the history's first step
  jsonArea.addEventListener('input', () => {
    editor.render();
    record(editor);
    live.schedule();
  });
  for (const field of document.querySelectorAll('[data-previewed]')) field.addEventListener('input', live.schedule);
  editor.render();
  void live.preview();
  startRunPanel(editor);
}

const root = document.querySelector<HTMLElement>('[data-builder]');
const schemasBlock = document.querySelector<HTMLElement>('[data-editor-schemas]');
const jsonArea = document.querySelector<HTMLTextAreaElement>('[data-graph-json]');
if (root && schemasBlock && jsonArea) startEditor(root, schemasBlock, jsonArea);
