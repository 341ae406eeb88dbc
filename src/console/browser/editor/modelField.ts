import type { ServedModel } from '../../editorTypes.ts';
import { make } from '../dom.ts';

// A node's `model` as a menu of the models the service serves (GET /api/workflows/models' list,
// which the page carries). A model the workflow already names stays, marked "not served here", so
// opening a workflow never changes it; the save's check says why it is refused. When the provider
// serves any name, the field takes free text with the list offered beside it.

/** The model menu (`id`) for `value`, and what goes after it (the list a free-text field offers). */
export function modelControl(
  id: string,
  value: unknown,
  models: readonly ServedModel[],
  acceptsOther: boolean,
  set: (value: unknown) => void,
): { control: HTMLInputElement | HTMLSelectElement; after: HTMLElement[] } {
  const current = typeof value === 'string' ? value : '';
  const label = (m: ServedModel) => (m.description ? `${m.id} — ${m.description}` : m.id);
  if (acceptsOther) {
    const options = models.map((m) => make('option', { value: m.id, label: label(m) }));
    const list = make('datalist', { id: `${id}-models` }, ...options);
    const input = make('input', { id, type: 'text', list: list.id, spellcheck: 'false', value: current });
    input.addEventListener('input', () => set(input.value === '' ? undefined : input.value));
    return { control: input, after: [list] };
  }
  const listed = models.some((m) => m.id === current);
  const kept =
    listed || current === '' ? [] : [make('option', { value: current, text: `${current} (not served here)` })];
  const select = make(
    'select',
    { id },
    ...(current === '' ? [make('option', { value: '', text: '(choose a model)' })] : []),
    ...kept,
    ...models.map((m) => make('option', { value: m.id, text: label(m) })),
  );
  select.value = current;
  select.addEventListener('change', () => set(select.value === '' ? undefined : select.value));
  return { control: select, after: [] };
}
