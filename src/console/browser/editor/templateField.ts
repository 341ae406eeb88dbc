import { make } from '../dom.ts';
import { acceptInExpression, acceptOffer, expressionQuery, offers, templateQuery } from './suggest.ts';

// A template field's autocomplete and live preview. Typing `{{` lists what the node's templates
// may read (the preview's `scopes`, by the save's own rules) as a listbox under the field: arrow
// keys move through it, Enter or Tab writes the path and closes the braces, Escape closes it, a
// click picks one. The field keeps its focus throughout (aria-activedescendant), so the keyboard
// alone does it all. Under it, the template rendered with the last run's values.

type Field = HTMLInputElement | HTMLTextAreaElement;

/** Sent to the focused field when a preview brings new scopes. */
export const SCOPES_CHANGED = 'editor-scopes-changed';

/** The rendered text of a template field, as the last preview answered it. */
export interface RenderedTemplate {
  text?: string;
  error?: string;
}

/**
 * Wires `input` (its id `id`) as a combobox over `scope()`; returns the listbox to place after it.
 * `expression`: the field is a Liquid expression without braces (a switch's value), so the path at
 * the caret is completed as typed, with no `{{` to open it.
 */
export function templateCombobox(input: Field, id: string, scope: () => string[], expression = false): HTMLElement {
  const queryAt = expression ? expressionQuery : templateQuery;
  const write = expression ? acceptInExpression : acceptOffer;
  const list = make('ul', { role: 'listbox', id: `${id}-offers`, className: 'template-offers', hidden: true });
  list.setAttribute('aria-label', 'In scope here');
  // A one-line field is a combobox proper; a textarea stays a textbox that controls a list.
  if (input instanceof HTMLInputElement) {
    input.setAttribute('role', 'combobox');
    input.setAttribute('aria-expanded', 'false');
  }
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', list.id);
  let shown: string[] = [];
  let active = 0;
  let query: { start: number; partial: string } | null = null;

  const close = () => {
    shown = [];
    list.hidden = true;
    list.replaceChildren();
    input.removeAttribute('aria-activedescendant');
    if (input instanceof HTMLInputElement) input.setAttribute('aria-expanded', 'false');
  };
  const highlight = (i: number) => {
    active = (i + shown.length) % shown.length;
    list.querySelectorAll('[role=option]').forEach((o, n) => o.setAttribute('aria-selected', String(n === active)));
    input.setAttribute('aria-activedescendant', `${id}-offer-${active}`);
  };
  const accept = (path: string) => {
    if (!query) return;
    const caret = input.selectionStart ?? input.value.length;
    const done = write(input.value, query.start, caret, path);
    input.value = done.text;
    input.setSelectionRange(done.caret, done.caret);
    close();
    input.dispatchEvent(new Event('input', { bubbles: true }));
  };
  const open = () => {
    query = queryAt(input.value, input.selectionStart ?? input.value.length);
    shown = query ? offers(scope(), query.partial) : [];
    if (!shown.length) return close();
    list.replaceChildren(
      ...shown.map((path, n) => {
        const option = make('li', { role: 'option', id: `${id}-offer-${n}`, 'aria-selected': 'false', text: path });
        // Picked by the pointer without taking the focus from the field.
        option.addEventListener('mousedown', (e) => {
          e.preventDefault();
          accept(path);
        });
        return option;
      }),
    );
    list.hidden = false;
    if (input instanceof HTMLInputElement) input.setAttribute('aria-expanded', 'true');
    highlight(0);
  };
  // Asked for by typing, it waits for the scope: a node just added or connected has its scope
  // once the preview answers, maybe after the last keystroke.
  let asked = false;
  input.addEventListener('input', () => {
    open();
    asked = query !== null && !shown.length;
  });
  input.addEventListener(SCOPES_CHANGED, () => {
    if (asked && document.activeElement === input) open();
    asked = false;
  });
  input.addEventListener('blur', close);
  input.addEventListener('keydown', (e: Event) => {
    const key = (e as KeyboardEvent).key;
    if (!shown.length) return;
    if (key === 'ArrowDown' || key === 'ArrowUp') highlight(active + (key === 'ArrowDown' ? 1 : -1));
    else if (key === 'Enter' || key === 'Tab') accept(shown[active]!);
    else if (key === 'Escape') close();
    else return;
    e.preventDefault();
    e.stopPropagation();
  });
  return list;
}

/** The live preview under a template field (`data-template-preview`: its pointer). */
export function previewBox(id: string, pointer: string): HTMLElement {
  return make('div', { className: 'template-preview', id: `${id}-preview`, 'data-template-preview': pointer });
}

/** Shows `rendered` (or why there is nothing to show) in a preview box. */
export function showRendered(box: HTMLElement, rendered: RenderedTemplate | undefined, from: string | null): void {
  if (!from) {
    box.replaceChildren(make('small', { text: 'Preview: run the workflow once to see this with its values.' }));
    return;
  }
  if (!rendered) {
    box.replaceChildren(make('small', { text: `Preview with ${from}: empty.` }));
    return;
  }
  box.replaceChildren(
    make('small', { text: `Preview with ${from}${rendered.error ? ': would fail' : ''}:` }),
    rendered.error
      ? make('p', { className: 'field-error', text: rendered.error })
      : make('pre', { className: 'code', text: rendered.text ?? '' }),
  );
}
