import type { Editor } from '../editor/model.ts';

// Undo and redo: a history of the graph's snapshots (the JSON text, which is the form's one field
// and the graph's whole truth). Every change the builder or the canvas writes, and every edit of
// the text itself, is one step; undo puts the text back as it was before and redraws.

const LIMIT = 200;

interface History {
  past: string[];
  present: string;
  future: string[];
}

const histories = new WeakMap<Editor, History>();

function historyOf(editor: Editor): History {
  let h = histories.get(editor);
  if (!h) histories.set(editor, (h = { past: [], present: editor.jsonArea.value, future: [] }));
  return h;
}

/** Takes the text as it stands as a new step (a no-op when it did not change). */
export function record(editor: Editor): void {
  const h = historyOf(editor);
  const now = editor.jsonArea.value;
  if (now === h.present) return;
  h.past.push(h.present);
  if (h.past.length > LIMIT) h.past.shift();
  h.present = now;
  h.future = [];
}

/** Folds the text as it stands into the last step (a change made of two writes is one step). */
export function amend(editor: Editor): void {
  historyOf(editor).present = editor.jsonArea.value;
}

export const canUndo = (editor: Editor): boolean => historyOf(editor).past.length > 0;
export const canRedo = (editor: Editor): boolean => historyOf(editor).future.length > 0;

function restore(editor: Editor, text: string): void {
  editor.jsonArea.value = text;
  editor.render();
  editor.schedulePreview();
}

export function undo(editor: Editor): boolean {
  const h = historyOf(editor);
  const before = h.past.pop();
  if (before === undefined) return false;
  h.future.push(h.present);
  h.present = before;
  restore(editor, before);
  return true;
}

export function redo(editor: Editor): boolean {
  const h = historyOf(editor);
  const after = h.future.pop();
  if (after === undefined) return false;
  h.past.push(h.present);
  h.present = after;
  restore(editor, after);
  return true;
}
