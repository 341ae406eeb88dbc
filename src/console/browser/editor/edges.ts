import { make } from '../dom.ts';
import { addEdge, removeEdge, writeJson } from './changes.ts';
import { nodeAt, type Editor, type GraphEdge } from './model.ts';

// The builder's edges: their list (each with its branch and a Remove button) and the Connect
// control that adds one.

const nodeChoices = (editor: Editor, id: string, label: string, value: string | undefined) =>
  make(
    'div',
    { className: 'connect-field' },
    make('label', { for: id, text: label }),
    make(
      'select',
      { id },
      ...(editor.state.graph?.nodes ?? []).map((n) =>
        make('option', { value: n.id, text: n.id, selected: n.id === value }),
      ),
    ),
  );

function branchChoice(editor: Editor, edge: GraphEdge, index: number, values: string[]): HTMLSelectElement {
  const branch = make(
    'select',
    { 'aria-label': `Branch of ${edge.from} → ${edge.to}`, 'data-pointer': `/edges/${index}/branch` },
    make('option', { value: '', text: 'always' }),
    ...values.map((v) => make('option', { value: v, text: `when ${v}`, selected: edge.branch === v })),
  );
  branch.addEventListener('change', () => {
    if (branch.value) edge.branch = branch.value;
    else delete edge.branch;
    writeJson(editor);
  });
  return branch;
}

function edgeRow(editor: Editor, edge: GraphEdge, index: number): HTMLElement {
  const remove = make('button', { type: 'button', className: 'danger', 'data-remove-edge': String(index) }, 'Remove');
  remove.setAttribute('aria-label', `Remove the edge ${edge.from} → ${edge.to}`);
  remove.addEventListener('click', () => removeEdge(editor, index));
  const branch = editor.branchValues ? branchChoice(editor, edge, index, editor.branchValues) : null;
  return make(
    'li',
    { 'data-edge': String(index) },
    make('span', { text: `${edge.from} → ${edge.to} ` }),
    branch,
    remove,
  );
}

/** From, To and (when edges have branches) Followed, with Add edge. */
function connect(editor: Editor): HTMLElement {
  const { state, root, branchValues } = editor;
  const nodes = state.graph?.nodes ?? [];
  const from =
    state.from && state.graph && nodeAt(state.graph, state.from) ? state.from : (state.selected ?? nodes[0]?.id);
  const to =
    state.to && state.graph && nodeAt(state.graph, state.to) && state.to !== from
      ? state.to
      : nodes.find((n) => n.id !== from)?.id;
  const branch = branchValues
    ? make(
        'div',
        { className: 'connect-field' },
        make('label', { for: 'connect-branch', text: 'Followed' }),
        make(
          'select',
          { id: 'connect-branch' },
          make('option', { value: '', text: 'always' }),
          ...branchValues.map((v) => make('option', { value: v, text: `when ${v}` })),
        ),
      )
    : null;
  const add = make('button', { type: 'button', id: 'add-edge' }, 'Add edge');
  add.addEventListener('click', () => {
    const value = (id: string) => root.querySelector<HTMLSelectElement>(`#${id}`)?.value ?? '';
    state.from = value('connect-from');
    state.to = value('connect-to');
    addEdge(editor, state.from, state.to, value('connect-branch') || undefined);
  });
  return make(
    'fieldset',
    { className: 'connect' },
    make('legend', { text: 'Connect' }),
    nodeChoices(editor, 'connect-from', 'From', from ?? undefined),
    nodeChoices(editor, 'connect-to', 'To', to),
    branch,
    add,
  );
}

export function edgesPart(editor: Editor): HTMLElement {
  const edges = editor.state.graph?.edges ?? [];
  return make(
    'section',
    { className: 'builder-edges', 'aria-labelledby': 'edges-heading' },
    make('h3', { id: 'edges-heading', text: `Edges (${edges.length})` }),
    edges.length
      ? make('ul', { className: 'edge-list' }, ...edges.map((edge, i) => edgeRow(editor, edge, i)))
      : make('p', {}, make('small', { text: 'No edges yet.' })),
    (editor.state.graph?.nodes.length ?? 0) > 1 ? connect(editor) : null,
    make('p', {
      className: 'hint',
      text: 'With a mouse, you can also drag from one box of the preview to another, and click an edge there to remove it.',
    }),
  );
}
