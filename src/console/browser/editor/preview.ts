import type { EditorPreview, PlacedProblem } from '../../editorTypes.ts';
import { countOf } from '../../format.ts';
import { make } from '../dom.ts';
import { nodeAt, problemsOf, type Editor } from './model.ts';
import { wireEdges, wirePicture } from './picture.ts';
import { markProblems } from './problems.ts';
import { SCOPES_CHANGED, showRendered } from './templateField.ts';

// The live preview: the picture and the problems follow as you type (POST
// /workflows/editor/preview, by the save's own rules; nothing is saved). The last question asked
// wins: an answer to an earlier one is dropped.

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function problemList(problems: PlacedProblem[]): HTMLElement {
  if (!problems.length) return make('p', { className: 'success', text: 'No problems: ready to save.' });
  return make(
    'div',
    { className: 'error' },
    make('p', { text: `${countOf(problems.length, 'problem')} as it stands (saving would be refused):` }),
    make(
      'ul',
      { className: 'problems' },
      ...problems.map((p) => make('li', {}, make('strong', { text: capital(p.label) }), `: ${p.message}`)),
    ),
  );
}

function showPreview(editor: Editor, answer: EditorPreview): void {
  const { root, state } = editor;
  const box = document.querySelector<HTMLElement>('[data-preview-graph]');
  if (!box) return;
  if (answer.graph)
    box.innerHTML = answer.graph; // server-rendered, every text escaped
  else box.replaceChildren(make('p', {}, make('small', { text: 'The graph is drawn once its JSON is well formed.' })));
  document.querySelector('[data-live-problems]')?.replaceChildren(problemList(answer.problems));
  state.templates = {
    scopes: answer.scopes ?? {},
    rendered: answer.rendered ?? {},
    renderedFrom: answer.renderedFrom ?? null,
  };
  document.activeElement?.dispatchEvent(new Event(SCOPES_CHANGED));
  for (const box of root.querySelectorAll<HTMLElement>('[data-template-preview]'))
    showRendered(box, answer.rendered?.[box.dataset.templatePreview ?? ''], answer.renderedFrom ?? null);
  if (state.graph) {
    for (const b of root.querySelectorAll<HTMLElement>('[data-node-button]')) {
      const node = nodeAt(state.graph, b.dataset.nodeButton ?? '');
      if (node) b.classList.toggle('has-problem', problemsOf(state.graph, state.problems, node).length > 0);
    }
    markProblems(editor);
  }
  wirePicture(editor, box);
  wireEdges(editor, box);
  root.dispatchEvent(new Event('editor-problems')); // the canvas marks them too
}

/** Asks for the preview of the form as it stands, and shows it. */
export function livePreview(editor: Editor): { preview: () => Promise<void>; schedule: () => void } {
  const form = editor.jsonArea.form;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let asked = 0;
  // A field's own problem (a blank name) waits until it was typed in, or sent (the page then marks
  // it): a new workflow's empty name is no mistake before the user got to it.
  const previewed = [...document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('[data-previewed]')];
  const touched = new Set(
    previewed.filter((f) => f.value !== '' || f.getAttribute('aria-invalid') === 'true').map((f) => f.name),
  );
  for (const f of previewed) f.addEventListener('input', () => touched.add(f.name));
  const waiting = (p: PlacedProblem) => previewed.some((f) => !touched.has(f.name) && p.pointer === `/${f.name}`);
  const preview = async () => {
    const url = editor.root.dataset.preview;
    if (!form || !url) return;
    const mine = ++asked;
    let answer: EditorPreview;
    try {
      const res = await fetch(url, {
        method: 'POST',
        body: new URLSearchParams([...new FormData(form)].map(([k, v]) => [k, String(v)])),
        headers: { Accept: 'application/json' },
        redirect: 'error',
        cache: 'no-store',
      });
      if (!res.ok) return;
      answer = (await res.json()) as EditorPreview;
    } catch {
      return; // offline or signed out: saving says what is wrong
    }
    if (mine !== asked) return; // a later keystroke asked again
    const shown = { ...answer, problems: answer.problems.filter((p) => !waiting(p)) };
    editor.state.problems = shown.problems;
    showPreview(editor, shown);
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(preview, 250);
  };
  return { preview, schedule };
}
