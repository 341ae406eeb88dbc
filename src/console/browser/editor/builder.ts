import { countOf } from '../../format.ts';
import { make } from '../dom.ts';
import { addNode, labelOf, select } from './changes.ts';
import { edgesPart } from './edges.ts';
import { nodeAt, problemsOf, readGraph, type Editor } from './model.ts';
import { nodeForm } from './nodeForm.ts';
import { markProblems } from './problems.ts';
import { runMark } from './runRequests.ts';

// The builder drawn from the JSON text: the palette, the node list, the selected node's form and
// the edges. Drawn anew on every change; the text stays the form's one field.

// A choice of every type rather than a button each: the contract's list grows, and a choice stays
// one line at any width, with the chosen type's description under it.
function palette(editor: Editor): HTMLElement {
  const { schemas, state, typeSpec } = editor;
  const choice = make(
    'select',
    { id: 'add-node-type', 'aria-describedby': 'add-node-hint' },
    ...schemas.nodeTypes.map((t) =>
      make('option', { value: t.type, text: t.label, selected: t.type === state.adding }),
    ),
  );
  const hint = make('p', { className: 'hint', id: 'add-node-hint' });
  const describe = () => {
    hint.textContent = typeSpec.get(choice.value)?.description ?? '';
  };
  choice.addEventListener('change', () => {
    state.adding = choice.value;
    describe();
  });
  describe();
  const add = make('button', { type: 'button', id: 'add-node' }, 'Add node');
  add.addEventListener('click', () => addNode(editor, choice.value));
  return make(
    'div',
    { className: 'palette' },
    make('label', { for: 'add-node-type', text: 'Add a node' }),
    make('div', { className: 'palette-row' }, choice, add),
    hint,
  );
}

/** A button per node (`data-node-button`: its id), marked when the preview found problems in it. */
export function nodeList(editor: Editor): HTMLElement {
  const { state } = editor;
  const graph = state.graph;
  return make(
    'ul',
    { className: 'node-list', 'aria-label': 'Nodes' },
    ...(graph?.nodes ?? []).map((n) => {
      const count = graph ? problemsOf(graph, state.problems, n).length : 0;
      const button = make(
        'button',
        {
          type: 'button',
          'aria-pressed': String(n.id === state.selected),
          className: count ? 'has-problem' : '',
          'data-node-button': n.id,
        },
        n.id,
        make('small', { text: ` ${labelOf(editor, n.type)}` }),
        count ? make('small', { className: 'problem-count', text: ` · ${countOf(count, 'problem')}` }) : null,
        runMark(state.run, n.id),
      );
      button.addEventListener('click', () => select(editor, n.id, false));
      return make('li', {}, button);
    }),
  );
}

/** Draws the builder from the JSON text, or says why it cannot. */
export function render(editor: Editor): void {
  const { root, state } = editor;
  const read = readGraph(editor.jsonArea.value);
  root.replaceChildren(
    make('h2', { id: 'builder-heading', text: 'Build' }),
    make('p', { className: 'builder-status', role: 'status', 'data-builder-status': true }),
  );
  root.setAttribute('aria-labelledby', 'builder-heading');
  if ('reason' in read) {
    state.graph = null;
    const text = `The builder shows the graph once the JSON below reads as one: ${read.reason}.`;
    root.append(make('p', { className: 'notice', text }));
    return;
  }
  const graph = (state.graph = read.graph);
  if (!state.selected || !nodeAt(graph, state.selected)) state.selected = graph.nodes[0]?.id ?? null;
  const selectedNode = state.selected ? nodeAt(graph, state.selected) : undefined;
  root.append(
    make('p', {
      className: 'hint',
      text: 'Add nodes, set each one up and connect them: the JSON below follows, and you can edit it directly too.',
    }),
    palette(editor),
    make(
      'div',
      { className: 'builder-main' },
      nodeList(editor),
      selectedNode ? nodeForm(editor, selectedNode) : make('p', {}, make('small', { text: 'No nodes yet: add one.' })),
    ),
    edgesPart(editor),
  );
  markProblems(editor);
}

/** Redraws the node list and the edges in place; the selected node's form stays (with its focus). */
export function renderLists(editor: Editor): void {
  const { root } = editor;
  root.querySelector('.node-list')?.replaceWith(nodeList(editor));
  root.querySelector('.builder-edges')?.replaceWith(edgesPart(editor));
  markProblems(editor);
}
