import { make } from '../dom.ts';
import { nodeAt, problemsOf, type Editor } from './model.ts';
import { fieldFor } from './placement.ts';

// The preview's problems at their fields: the field whose `data-pointer` is a problem's pointer
// (else the nearest one enclosing it: a key inside a JSON box) is marked invalid and described by
// the message under it; the selected node's problems that have
// no field of their own are listed at the end of its form.

let problemIds = 0;

/** Takes the marks of the last answer off. */
function clearMarks(root: HTMLElement): void {
  // A field showing its own message (data-local-invalid: the Id field) keeps it.
  for (const e of root.querySelectorAll<HTMLElement>('[data-pointer][aria-invalid]:not([data-local-invalid])')) {
    e.removeAttribute('aria-invalid');
    const base = e.dataset.describedby;
    if (base) e.setAttribute('aria-describedby', base);
    else e.removeAttribute('aria-describedby');
  }
  for (const e of root.querySelectorAll('[data-live-error]')) e.remove();
}

function markField(field: HTMLElement, message: string): void {
  const error = make('p', {
    className: 'field-error live-error',
    id: `live-problem-${++problemIds}`,
    text: message,
    'data-live-error': true,
  });
  if (!field.hasAttribute('aria-invalid')) field.dataset.describedby = field.getAttribute('aria-describedby') ?? '';
  field.setAttribute('aria-invalid', 'true');
  field.setAttribute('aria-describedby', [field.getAttribute('aria-describedby'), error.id].filter(Boolean).join(' '));
  field.after(error);
}

export function markProblems(editor: Editor): void {
  const { root, state } = editor;
  clearMarks(root);
  const selectedNode = state.graph && state.selected ? nodeAt(state.graph, state.selected) : undefined;
  const selected = state.graph && selectedNode ? problemsOf(state.graph, state.problems, selectedNode) : [];
  const fields = [...root.querySelectorAll<HTMLElement>('[data-pointer]')].filter((e) => e.tagName !== 'FIELDSET');
  const pointers = fields.map((e) => e.dataset.pointer ?? '');
  const leftover = [];
  for (const p of state.problems) {
    const at = fieldFor(p.pointer, pointers);
    const field = at === null ? undefined : fields[pointers.indexOf(at)];
    if (field?.hasAttribute('data-local-invalid')) continue;
    if (!field) {
      if (selected.includes(p)) leftover.push(p);
      continue;
    }
    markField(field, p.message);
  }
  root
    .querySelector('[data-node-problems]')
    ?.replaceChildren(
      ...leftover.map((p) =>
        make('p', { className: 'field-error live-error', text: `${p.label}: ${p.message}`, 'data-live-error': true }),
      ),
    );
}
