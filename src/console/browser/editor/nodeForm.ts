import type { FieldSchema } from '../../editorTypes.ts';
import { make } from '../dom.ts';
import { caseEditor } from './caseEditor.ts';
import { labelOf, removeNode, renameNode, writeJson } from './changes.ts';
import { fields, setAt, type FieldExtras } from './fields.ts';
import { modelControl } from './modelField.ts';
import { previewBox, showRendered, templateCombobox } from './templateField.ts';
import { nodeAt, type Editor, type GraphNode } from './model.ts';

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Why `id` cannot be `node`'s new Id, or null when it can. */
function idProblem(editor: Editor, node: GraphNode, id: string): string | null {
  if (!id) return 'A node needs an Id.';
  if (!ID.test(id)) return 'Only letters, digits, "_" and "-" (at most 64).';
  const graph = editor.state.graph;
  if (id !== node.id && graph && nodeAt(graph, id))
    return `"${id}" is the Id of another node: each node needs its own.`;
  return null;
}

/**
 * The Id field. A valid, free Id is taken as it is typed, the node list and the edges following
 * and the form left as it is: redrawn when the field lost focus, the form would take the next
 * click's target away before the click lands. An Id another node has is refused here, said why.
 */
function idField(editor: Editor, node: GraphNode, index: number, onRename: () => void): HTMLElement[] {
  const local = make('p', { className: 'field-error', id: 'node-id-local', hidden: true });
  const input = make('input', {
    id: 'node-id',
    type: 'text',
    value: node.id,
    required: true,
    // Escaped "-": Chromium compiles a pattern with the `v` flag, where a bare "-" in a class is an error.
    pattern: '[A-Za-z0-9_\\-]+',
    maxlength: '64',
    'data-pointer': `/nodes/${index}/id`,
    'aria-describedby': 'node-id-hint',
  });
  const say = (message: string | null) => {
    local.hidden = !message;
    local.textContent = message ?? '';
    if (message) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    input.setAttribute('aria-describedby', message ? 'node-id-hint node-id-local' : 'node-id-hint');
    // The preview's marks leave this field's own message alone.
    input.toggleAttribute('data-local-invalid', Boolean(message));
  };
  // A refused edit gives the node back the Id it had before it (the typing renamed it on the way).
  let before = node.id;
  input.addEventListener('focus', () => {
    before = node.id;
  });
  input.addEventListener('input', () => {
    const id = input.value.trim();
    const problem = idProblem(editor, node, id);
    say(problem);
    if (!problem && id !== node.id && renameNode(editor, node, id)) onRename();
  });
  input.addEventListener('change', () => {
    const id = input.value.trim();
    if (id === node.id) return;
    const problem = idProblem(editor, node, id);
    if (!problem) return;
    if (before !== node.id && !idProblem(editor, node, before) && renameNode(editor, node, before)) onRename();
    input.value = node.id;
    say(`${problem} The node keeps "${node.id}".`);
  });
  return [
    make('label', { for: 'node-id' }, 'Id', make('small', { text: ' (required)' })),
    make('p', {
      className: 'hint',
      id: 'node-id-hint',
      text: 'Letters, digits, "_" and "-"; templates name it as nodes.<id>.output.',
    }),
    input,
    local,
  ];
}

/** The model menu, and each template field's offers and live preview. */
function extrasOf(editor: Editor, node: GraphNode): FieldExtras {
  const spec = editor.typeSpec.get(node.type);
  const { models, acceptsOtherModels } = editor.schemas;
  return {
    control: (key, id, value, set) =>
      key === spec?.modelField && models ? modelControl(id, value, models, acceptsOtherModels ?? false, set) : null,
    decorate: (key, input, id, pointer) => {
      const expression = spec?.expressionFields?.includes(key) ?? false;
      if ((!spec?.templateFields?.includes(key) && !expression) || input instanceof HTMLSelectElement) return [];
      const scope = () => editor.state.templates?.scopes?.[node.id] ?? [];
      const offers = templateCombobox(input, id, scope, expression);
      const box = previewBox(id, pointer);
      const shown = editor.state.templates;
      if (shown) showRendered(box, shown.rendered?.[pointer], shown.renderedFrom ?? null);
      return [offers, box];
    },
  };
}

/** The config's fields, its case list (when its type has one) as a case editor. */
function configFields(editor: Editor, node: GraphNode, schema: FieldSchema, index: number): HTMLElement[] {
  const onChange = (path: string[], value: unknown) => {
    setAt(node.config, path, value);
    writeJson(editor);
  };
  const pointer = `/nodes/${index}/config`;
  const list = editor.typeSpec.get(node.type)?.caseList;
  const listSchema = list ? schema.properties?.[list] : undefined;
  const extras = extrasOf(editor, node);
  if (!list || !listSchema) return fields(schema, node.config, pointer, onChange, 'cfg', [], extras);
  const keys = Object.keys(schema.properties ?? {});
  const others = Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => k !== list));
  const rest = fields({ ...schema, properties: others }, node.config, pointer, onChange, 'cfg', [], extras);
  const cases = caseEditor(
    editor,
    node,
    list,
    listSchema,
    `${pointer}/${list}`,
    schema.required?.includes(list) ?? false,
  );
  rest.splice(keys.indexOf(list), 0, cases);
  return rest;
}

/** The selected node's form: its id, a field per config property (from its type's schema), and Remove. */
export function nodeForm(editor: Editor, node: GraphNode): HTMLElement {
  const spec = editor.typeSpec.get(node.type);
  const index = editor.state.graph?.nodes.indexOf(node) ?? -1;
  // Unknown to the contract: its config as JSON (the API will say the type is unknown).
  const schema = spec?.config ?? { type: 'object', properties: {} };
  const remove = make('button', { type: 'button', className: 'danger' }, `Remove node ${node.id}`);
  remove.addEventListener('click', () => removeNode(editor, node.id));
  const title = make('span', { text: `Node ${node.id} ` });
  const form = make(
    'fieldset',
    { className: 'node-form', id: `edit-node-${node.id}`, tabindex: '-1' },
    make('legend', {}, title, make('small', { text: labelOf(editor, node.type) })),
    spec?.description ? make('p', { className: 'hint', text: spec.description }) : null,
    ...idField(editor, node, index, () => {
      title.textContent = `Node ${node.id} `;
      remove.textContent = `Remove node ${node.id}`;
      form.id = `edit-node-${node.id}`;
      editor.renderLists();
    }),
    ...configFields(editor, node, schema, index),
    make('div', { className: 'node-problems', 'data-node-problems': true }),
    remove,
  );
  return form;
}
