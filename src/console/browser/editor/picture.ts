import { make, makeSvg } from '../dom.ts';
import { addEdge, removeEdge, select } from './changes.ts';
import type { Editor } from './model.ts';

// The preview's picture (src/console/views/graphSvg.ts) made to build with: a box selects its
// node, dragging from a box to another connects them, and an edge clicked is marked, with a button
// under the picture that removes it. Boxes are `data-node`, their links `data-node-link`, edges
// `data-from`/`data-to`/`data-branch` (their drawn line `data-edge-line`).

function pictureActions(box: HTMLElement): HTMLElement {
  const found = document.querySelector<HTMLElement>('[data-picture-actions]');
  const actions =
    found ?? make('div', { id: 'picture-actions', className: 'picture-actions', 'data-picture-actions': true });
  if (!actions.isConnected) box.after(actions);
  actions.replaceChildren();
  return actions;
}

export function wireEdges(editor: Editor, box: HTMLElement): void {
  const actions = pictureActions(box);
  for (const g of box.querySelectorAll<SVGGElement>('g[data-from][data-to]')) {
    const { from = '', to = '', branch = '' } = g.dataset;
    // A wider, invisible stroke to aim at: the drawn one is 1.5 px.
    const hit = makeSvg('path');
    hit.setAttribute('d', g.querySelector('[data-edge-line]')?.getAttribute('d') ?? '');
    hit.setAttribute('class', 'edge-hit');
    g.prepend(hit);
    g.addEventListener('click', () => {
      const index =
        editor.state.graph?.edges.findIndex((e) => e.from === from && e.to === to && (e.branch ?? '') === branch) ?? -1;
      if (index < 0) return;
      for (const other of box.querySelectorAll('g.selected[data-from]')) other.classList.remove('selected');
      g.classList.add('selected');
      const remove = make(
        'button',
        { type: 'button', className: 'danger', id: 'remove-picked-edge' },
        `Remove the edge ${from} → ${to}`,
      );
      remove.addEventListener('click', () => removeEdge(editor, index));
      actions.replaceChildren(remove);
      remove.focus({ preventScroll: true });
    });
  }
}

/** The node box under the pointer, if any. */
const boxAt = (x: number, y: number) => document.elementFromPoint(x, y)?.closest<SVGGElement>('g[data-node]');

export function wirePicture(editor: Editor, box: HTMLElement): void {
  const svg = box.querySelector('svg');
  if (!svg || !editor.state.graph) return;
  for (const link of svg.querySelectorAll<SVGAElement>('a[data-node-link]')) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      select(editor, link.dataset.nodeLink ?? '', true);
    });
  }
  let drag: { from: string; line: SVGLineElement; moved: boolean } | null = null;
  const point = (event: PointerEvent) =>
    new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM()?.inverse());
  svg.addEventListener('pointerdown', (event) => {
    const node = (event.target as Element | null)?.closest<SVGGElement>('g[data-node]');
    if (!node || event.pointerType === 'touch' || event.button !== 0) return;
    event.preventDefault(); // no native drag of the link
    const start = point(event);
    const line = makeSvg('line');
    line.setAttribute('class', 'drawing');
    for (const [k, v] of Object.entries({ x1: start.x, y1: start.y, x2: start.x, y2: start.y }))
      line.setAttribute(k, String(v));
    svg.append(line);
    drag = { from: node.dataset.node ?? '', line, moved: false };
  });
  svg.addEventListener('pointermove', (event) => {
    if (!drag) return;
    const p = point(event);
    drag.moved = true;
    drag.line.setAttribute('x2', String(p.x));
    drag.line.setAttribute('y2', String(p.y));
  });
  svg.addEventListener('pointerup', (event) => {
    if (!drag) return;
    const { from, line, moved } = drag;
    drag = null;
    line.remove();
    const target = boxAt(event.clientX, event.clientY)?.dataset.node;
    if (moved && target && target !== from) addEdge(editor, from, target, {});
  });
  svg.addEventListener('pointerleave', () => {
    drag?.line.remove();
    drag = null;
  });
}
