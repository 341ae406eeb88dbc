import { make } from '../dom.ts';
import { labelOf, removeNode, renameNode, writeJson } from './changes.ts';
import { fields, setAt } from './fields.ts';
import type { Editor, GraphNode } from './model.ts';

/** The selected node's form: its id, a field per config property (from its type's schema), and Remove. */
export function nodeForm(editor: Editor, node: GraphNode): HTMLElement {
  const spec = editor.typeSpec.get(node.type);
  const index = editor.state.graph?.nodes.indexOf(node) ?? -1;
  const idInput = make('input', {
    id: 'node-id',
    type: 'text',
    value: node.id,
    required: true,
    pattern: '[A-Za-z0-9_-]+',
    maxlength: '64',
    'data-pointer': `/nodes/${index}/id`,
    'aria-describedby': 'node-id-hint',
  });
  idInput.addEventListener('change', () => {
    if (renameNode(editor, node, idInput.value.trim())) editor.render();
    else idInput.value = node.id;
  });
  // Unknown to the contract: its config as JSON (the API will say the type is unknown).
  const schema = spec?.config ?? { type: 'object', properties: {} };
  const onChange = (path: string[], value: unknown) => {
    setAt(node.config, path, value);
    writeJson(editor);
  };
  const remove = make('button', { type: 'button', className: 'danger' }, `Remove node ${node.id}`);
  remove.addEventListener('click', () => removeNode(editor, node.id));
  return make(
    'fieldset',
    { className: 'node-form', id: `edit-node-${node.id}`, tabindex: '-1' },
    make('legend', {}, `Node ${node.id} `, make('small', { text: labelOf(editor, node.type) })),
    spec?.description ? make('p', { className: 'hint', text: spec.description }) : null,
    make('label', { for: 'node-id' }, 'Id', make('small', { text: ' (required)' })),
    make('p', {
      className: 'hint',
      id: 'node-id-hint',
      text: 'Letters, digits, "_" and "-"; templates name it as nodes.<id>.output.',
    }),
    idInput,
    ...fields(schema, node.config, `/nodes/${index}/config`, onChange, 'cfg'),
    make('div', { className: 'node-problems', 'data-node-problems': true }),
    remove,
  );
}
