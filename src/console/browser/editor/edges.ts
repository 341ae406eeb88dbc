import { make } from '../dom.ts';
import { addEdge, removeEdge, writeJson } from './changes.ts';
import { edgeMarkOf, nodeAt, type EdgeMark, type Editor, type GraphEdge } from './model.ts';

// The builder's edges: their list (each with its branch or case and a Remove button) and the
// Connect control that adds one. An edge out of a node with cases (a switch) picks one of them or
// `default` (`case`); any other edge keeps the contract's `branch` choices.

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

const markOptions = (mark: EdgeMark, chosen: string | undefined) =>
  mark.values.map((v, i) => make('option', { value: v, text: mark.labels[i], selected: v === (chosen ?? '') }));

function markChoice(editor: Editor, edge: GraphEdge, index: number, mark: EdgeMark): HTMLSelectElement {
  const chosen = edge[mark.key];
  const choice = make(
    'select',
    {
      'aria-label': `${mark.key === 'case' ? 'Case' : 'Branch'} of ${edge.from} → ${edge.to}`,
      'data-pointer': `/edges/${index}/${mark.key}`,
    },
    // An edge that must name a case and names none yet (drawn on the picture) says so.
    mark.key === 'case' && !mark.values.includes(chosen ?? '')
      ? make('option', { value: '', text: chosen ? `case ${chosen} (none such)` : '(choose a case)', selected: true })
      : null,
    ...markOptions(mark, chosen),
  );
  choice.addEventListener('change', () => {
    if (choice.value) edge[mark.key] = choice.value;
    else delete edge[mark.key];
    if (mark.key === 'case') delete edge.branch;
    writeJson(editor);
  });
  return choice;
}

function edgeRow(editor: Editor, edge: GraphEdge, index: number): HTMLElement {
  const remove = make('button', { type: 'button', className: 'danger', 'data-remove-edge': String(index) }, 'Remove');
  remove.setAttribute('aria-label', `Remove the edge ${edge.from} → ${edge.to}`);
  remove.addEventListener('click', () => removeEdge(editor, index));
  const graph = editor.state.graph;
  const mark = edgeMarkOf(editor, graph ? nodeAt(graph, edge.from) : undefined);
  const branch = mark ? markChoice(editor, edge, index, mark) : null;
  return make(
    'li',
    { 'data-edge': String(index) },
    make('span', { text: `${edge.from} → ${edge.to} ` }),
    branch,
    remove,
  );
}

/** The Followed choice of the Connect control, for edges out of the node `from`. */
function followChoice(editor: Editor, from: string | undefined): HTMLSelectElement {
  const graph = editor.state.graph;
  const mark = edgeMarkOf(editor, graph && from ? nodeAt(graph, from) : undefined);
  return make(
    'select',
    { id: 'connect-follow', 'data-mark': mark?.key },
    ...(mark ? markOptions(mark, mark.values[0]) : []),
  );
}

/** From, To and (when edges have branches or cases) Followed, with Add edge. */
function connect(editor: Editor): HTMLElement {
  const { state, root } = editor;
  const nodes = state.graph?.nodes ?? [];
  const from =
    state.from && state.graph && nodeAt(state.graph, state.from) ? state.from : (state.selected ?? nodes[0]?.id);
  const to =
    state.to && state.graph && nodeAt(state.graph, state.to) && state.to !== from
      ? state.to
      : nodes.find((n) => n.id !== from)?.id;
  let follow = followChoice(editor, from ?? undefined);
  const followField = make(
    'div',
    { className: 'connect-field' },
    make('label', { for: 'connect-follow', text: 'Followed' }),
    follow,
  );
  followField.hidden = !follow.options.length;
  const fromField = nodeChoices(editor, 'connect-from', 'From', from ?? undefined);
  const fromChoice = fromField.querySelector('select');
  // The choices follow the From node: a switch's cases, or the branches.
  fromChoice?.addEventListener('change', () => {
    const next = followChoice(editor, fromChoice.value);
    follow.replaceWith(next);
    follow = next;
    followField.hidden = !follow.options.length;
  });
  const add = make('button', { type: 'button', id: 'add-edge' }, 'Add edge');
  add.addEventListener('click', () => {
    const value = (id: string) => root.querySelector<HTMLSelectElement>(`#${id}`)?.value ?? '';
    state.from = value('connect-from');
    state.to = value('connect-to');
    const key = follow.dataset.mark as 'case' | 'branch' | undefined;
    addEdge(editor, state.from, state.to, key && follow.value ? { [key]: follow.value } : {});
  });
  return make(
    'fieldset',
    { className: 'connect' },
    make('legend', { text: 'Connect' }),
    fromField,
    nodeChoices(editor, 'connect-to', 'To', to),
    followField,
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
      text: 'On the canvas above, you can also drag from an output of a node to the input of another, and select an edge there and press Delete.',
    }),
  );
}
