// The workflow editor's builder (/assets/editor.js, on /workflows/new and /workflows/{id}/edit):
// a palette of every node type the contract has (a choice and an Add button), a form per node built from its config schema
// (editor-fields.js), edges added from a "connect" control or drawn on the picture by dragging
// from one box to another, removed from their list or by clicking them on the picture. The
// keyboard reaches all of it (the picture's boxes are links). The JSON text below stays the form's one
// field: the builder writes it, and typing in it redraws the builder. The picture and the
// problems follow as you type (POST /workflows/editor/preview: the save's own rules). Without
// script the page is the plain form, which saves the same JSON.
{
  const root = document.getElementById('builder');
  const schemasBlock = document.getElementById('editor-schemas');
  const jsonArea = document.getElementById('graph');
  if (root && schemasBlock && jsonArea && globalThis.editorFields) {
    const { fields, initial, setAt, make } = globalThis.editorFields;
    const { nodeTypes, edge: edgeSchema } = JSON.parse(schemasBlock.textContent);
    const typeSpec = new Map(nodeTypes.map((t) => [t.type, t]));
    const form = jsonArea.form;
    const state = { graph: null, selected: null, problems: [], from: null, to: null, adding: nodeTypes[0]?.type };
    const branchSchema = edgeSchema.properties?.branch;
    const branchValues = branchSchema?.enum ?? null;

    /** The JSON text as a graph the builder can show, or the reason it cannot. */
    const readJson = () => {
      let value;
      try {
        value = JSON.parse(jsonArea.value);
      } catch (err) {
        return { reason: `it is not JSON (${err.message})` };
      }
      const nodes = value?.nodes ?? [];
      const edges = value?.edges ?? [];
      if (typeof value !== 'object' || !Array.isArray(nodes) || !Array.isArray(edges))
        return { reason: 'it needs "nodes" and "edges" lists' };
      if (!nodes.every((n) => n && typeof n.id === 'string' && typeof n.type === 'string'))
        return { reason: 'a node has no id or type' };
      if (!edges.every((e) => e && typeof e.from === 'string' && typeof e.to === 'string'))
        return { reason: 'an edge has no from or to' };
      for (const n of nodes) if (typeof n.config !== 'object' || n.config === null) n.config = {};
      return { graph: { nodes, edges } };
    };
    const writeJson = () => {
      jsonArea.value = JSON.stringify(state.graph, null, 2);
      schedulePreview();
    };
    const nodeAt = (id) => state.graph.nodes.find((n) => n.id === id);
    const labelOf = (type) => typeSpec.get(type)?.label ?? type;
    const freshId = (type) => {
      const base = type.replace(/[^A-Za-z0-9_-]/g, '_');
      for (let n = 1; ; n++) if (!nodeAt(`${base}_${n}`)) return `${base}_${n}`;
    };
    const announce = (text) => {
      root.querySelector('.builder-status').textContent = text;
    };

    // --- changes, each written to the JSON at once ---
    const addNode = (type) => {
      const spec = typeSpec.get(type);
      const id = freshId(type);
      state.adding = type;
      const config = initial({ ...spec.config, example: undefined });
      state.graph.nodes.push({ id, type, config });
      state.to = id;
      state.from = state.selected && state.selected !== id ? state.selected : state.from;
      state.selected = id;
      writeJson();
      render();
      root.querySelector('#node-id')?.focus();
      announce(`Added ${labelOf(type)} "${id}". Connect it below.`);
    };
    const removeNode = (id) => {
      state.graph.nodes = state.graph.nodes.filter((n) => n.id !== id);
      state.graph.edges = state.graph.edges.filter((e) => e.from !== id && e.to !== id);
      state.selected = state.graph.nodes[0]?.id ?? null;
      writeJson();
      render();
      root.querySelector('#add-node-type')?.focus();
      announce(`Removed "${id}" and its edges.`);
    };
    const renameNode = (node, id) => {
      if (!id || id === node.id || nodeAt(id)) return false;
      for (const e of state.graph.edges) {
        if (e.from === node.id) e.from = id;
        if (e.to === node.id) e.to = id;
      }
      node.id = id;
      state.selected = id;
      writeJson();
      return true;
    };
    const addEdge = (from, to, branch) => {
      if (!from || !to || from === to) return announce('Pick two different nodes to connect.');
      if (state.graph.edges.some((e) => e.from === from && e.to === to && (e.branch ?? '') === (branch ?? '')))
        return announce(`${from} → ${to} is there already.`);
      state.graph.edges.push(branch ? { from, to, branch } : { from, to });
      writeJson();
      render();
      announce(`Connected ${from} → ${to}${branch ? ` (when ${branch})` : ''}.`);
    };
    const removeEdge = (index) => {
      const [gone] = state.graph.edges.splice(index, 1);
      writeJson();
      render();
      document.getElementById('picture-actions')?.replaceChildren();
      (root.querySelectorAll('.edge-list button')[index] ?? root.querySelector('#connect-from'))?.focus();
      announce(`Removed the edge ${gone.from} → ${gone.to}.`);
    };

    // --- the builder's parts ---
    // A choice of every type rather than a button each: the contract's list grows, and a
    // choice stays one line at any width, with the chosen type's description under it.
    const palette = () => {
      const choice = make(
        'select',
        { id: 'add-node-type', 'aria-describedby': 'add-node-hint' },
        ...nodeTypes.map((t) => make('option', { value: t.type, text: t.label, selected: t.type === state.adding })),
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
      add.addEventListener('click', () => addNode(choice.value));
      return make(
        'div',
        { className: 'palette' },
        make('label', { for: 'add-node-type', text: 'Add a node' }),
        make('div', { className: 'palette-row' }, choice, add),
        hint,
      );
    };

    const nodeList = () =>
      make(
        'ul',
        { className: 'node-list', 'aria-label': 'Nodes' },
        ...state.graph.nodes.map((n) => {
          const count = problemsOf(n).length;
          const button = make(
            'button',
            { type: 'button', 'aria-pressed': String(n.id === state.selected), className: count ? 'has-problem' : '' },
            n.id,
            make('small', { text: ` ${labelOf(n.type)}` }),
            count
              ? make('small', {
                  className: 'problem-count',
                  text: ` · ${count} ${count === 1 ? 'problem' : 'problems'}`,
                })
              : null,
          );
          button.addEventListener('click', () => select(n.id, false));
          return make('li', {}, button);
        }),
      );

    const nodeIndex = (node) => state.graph.nodes.indexOf(node);
    const problemsOf = (node) =>
      state.problems.filter(
        (p) => p.pointer === `/nodes/${nodeIndex(node)}` || p.pointer.startsWith(`/nodes/${nodeIndex(node)}/`),
      );

    function nodeForm(node) {
      const spec = typeSpec.get(node.type);
      const index = nodeIndex(node);
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
        if (renameNode(node, idInput.value.trim())) render();
        else idInput.value = node.id;
      });
      // Unknown to the contract: its config as JSON (the API will say the type is unknown).
      const schema = spec?.config ?? { type: 'object', properties: {} };
      const onChange = (path, value) => {
        setAt(node.config, path, value);
        writeJson();
      };
      const remove = make('button', { type: 'button', className: 'danger' }, `Remove node ${node.id}`);
      remove.addEventListener('click', () => removeNode(node.id));
      const heading = make('legend', {}, `Node ${node.id} `, make('small', { text: labelOf(node.type) }));
      const problems = make('div', { className: 'node-problems' });
      return make(
        'fieldset',
        { className: 'node-form', id: `edit-node-${node.id}`, tabindex: '-1' },
        heading,
        spec?.description ? make('p', { className: 'hint', text: spec.description }) : null,
        make('label', { for: 'node-id' }, 'Id', make('small', { text: ' (required)' })),
        make('p', {
          className: 'hint',
          id: 'node-id-hint',
          text: 'Letters, digits, "_" and "-"; templates name it as nodes.<id>.output.',
        }),
        idInput,
        ...fields(schema, node.config, `/nodes/${index}/config`, onChange, 'cfg'),
        problems,
        remove,
      );
    }

    const nodeChoices = (id, label, value) =>
      make(
        'div',
        { className: 'connect-field' },
        make('label', { for: id, text: label }),
        make(
          'select',
          { id },
          ...state.graph.nodes.map((n) => make('option', { value: n.id, text: n.id, selected: n.id === value })),
        ),
      );

    function edgeRow(edge, index) {
      const remove = make('button', { type: 'button', className: 'danger' }, 'Remove');
      remove.setAttribute('aria-label', `Remove the edge ${edge.from} → ${edge.to}`);
      remove.addEventListener('click', () => removeEdge(index));
      let branch = null;
      if (branchValues) {
        branch = make(
          'select',
          { 'aria-label': `Branch of ${edge.from} → ${edge.to}`, 'data-pointer': `/edges/${index}/branch` },
          make('option', { value: '', text: 'always' }),
          ...branchValues.map((v) => make('option', { value: v, text: `when ${v}`, selected: edge.branch === v })),
        );
        branch.addEventListener('change', () => {
          if (branch.value) edge.branch = branch.value;
          else delete edge.branch;
          writeJson();
        });
      }
      return make(
        'li',
        { 'data-edge': String(index) },
        make('span', { text: `${edge.from} → ${edge.to} ` }),
        branch,
        remove,
      );
    }

    function edgesPart() {
      const nodes = state.graph.nodes;
      const from = state.from && nodeAt(state.from) ? state.from : (state.selected ?? nodes[0]?.id);
      const to = state.to && nodeAt(state.to) && state.to !== from ? state.to : nodes.find((n) => n.id !== from)?.id;
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
        state.from = root.querySelector('#connect-from').value;
        state.to = root.querySelector('#connect-to').value;
        addEdge(state.from, state.to, root.querySelector('#connect-branch')?.value || undefined);
      });
      return make(
        'section',
        { className: 'builder-edges', 'aria-labelledby': 'edges-heading' },
        make('h3', { id: 'edges-heading', text: `Edges (${state.graph.edges.length})` }),
        state.graph.edges.length
          ? make('ul', { className: 'edge-list' }, ...state.graph.edges.map(edgeRow))
          : make('p', {}, make('small', { text: 'No edges yet.' })),
        nodes.length > 1
          ? make(
              'fieldset',
              { className: 'connect' },
              make('legend', { text: 'Connect' }),
              nodeChoices('connect-from', 'From', from),
              nodeChoices('connect-to', 'To', to),
              branch,
              add,
            )
          : null,
        make('p', {
          className: 'hint',
          text: 'With a mouse, you can also drag from one box of the preview to another, and click an edge there to remove it.',
        }),
      );
    }

    function render() {
      const read = readJson();
      root.replaceChildren(
        make('h2', { id: 'builder-heading', text: 'Build' }),
        make('p', { className: 'builder-status', role: 'status' }),
      );
      root.setAttribute('aria-labelledby', 'builder-heading');
      if (!read.graph) {
        state.graph = null;
        root.append(
          make('p', {
            className: 'notice',
            text: `The builder shows the graph once the JSON below reads as one: ${read.reason}.`,
          }),
        );
        return;
      }
      state.graph = read.graph;
      if (!state.selected || !nodeAt(state.selected)) state.selected = state.graph.nodes[0]?.id ?? null;
      const selectedNode = state.selected ? nodeAt(state.selected) : null;
      root.append(
        make('p', {
          className: 'hint',
          text: 'Add nodes, set each one up and connect them: the JSON below follows, and you can edit it directly too.',
        }),
        palette(),
        make(
          'div',
          { className: 'builder-main' },
          nodeList(),
          selectedNode ? nodeForm(selectedNode) : make('p', {}, make('small', { text: 'No nodes yet: add one.' })),
        ),
        edgesPart(),
      );
      markProblems();
    }

    function select(id, focusForm) {
      state.selected = id;
      render();
      if (focusForm) root.querySelector('#node-id')?.focus();
      else root.querySelector('.node-list button[aria-pressed=true]')?.focus();
    }

    // --- problems at their fields ---
    let problemIds = 0;
    function markProblems() {
      for (const e of root.querySelectorAll('[data-pointer][aria-invalid]')) {
        e.removeAttribute('aria-invalid');
        const base = e.dataset.describedby;
        if (base) e.setAttribute('aria-describedby', base);
        else e.removeAttribute('aria-describedby');
      }
      for (const e of root.querySelectorAll('.live-error')) e.remove();
      const leftover = [];
      const selected = state.selected ? problemsOf(nodeAt(state.selected)) : [];
      for (const p of state.problems) {
        const field = [...root.querySelectorAll('[data-pointer]')].find(
          (e) => e.getAttribute('data-pointer') === p.pointer,
        );
        if (!field || field.tagName === 'FIELDSET') {
          if (selected.includes(p)) leftover.push(p);
          continue;
        }
        const message = make('p', {
          className: 'field-error live-error',
          id: `live-problem-${++problemIds}`,
          text: p.message,
        });
        if (!field.hasAttribute('aria-invalid'))
          field.dataset.describedby = field.getAttribute('aria-describedby') ?? '';
        field.setAttribute('aria-invalid', 'true');
        field.setAttribute(
          'aria-describedby',
          [field.getAttribute('aria-describedby'), message.id].filter(Boolean).join(' '),
        );
        field.after(message);
      }
      root
        .querySelector('.node-problems')
        ?.replaceChildren(
          ...leftover.map((p) => make('p', { className: 'field-error live-error', text: `${p.label}: ${p.message}` })),
        );
    }

    // --- the live preview ---
    let timer;
    let asked = 0;
    function schedulePreview() {
      clearTimeout(timer);
      timer = setTimeout(preview, 250);
    }
    async function preview() {
      const mine = ++asked;
      let answer;
      try {
        const res = await fetch(root.dataset.preview, {
          method: 'POST',
          body: new URLSearchParams(new FormData(form)),
          headers: { Accept: 'application/json' },
          redirect: 'error',
          cache: 'no-store',
        });
        if (!res.ok) return;
        answer = await res.json();
      } catch {
        return; // offline or signed out: saving says what is wrong
      }
      if (mine !== asked) return; // a later keystroke asked again
      state.problems = answer.problems;
      showPreview(answer);
    }
    function showPreview(answer) {
      const box = document.getElementById('preview-graph');
      if (answer.graph)
        box.innerHTML = answer.graph; // server-rendered, every text escaped
      else
        box.replaceChildren(make('p', {}, make('small', { text: 'The graph is drawn once its JSON is well formed.' })));
      const list = document.getElementById('live-problems');
      list.replaceChildren(
        answer.problems.length
          ? make(
              'div',
              { className: 'error' },
              make('p', {
                text: `${answer.problems.length} ${answer.problems.length === 1 ? 'problem' : 'problems'} as it stands (saving would be refused):`,
              }),
              make(
                'ul',
                { className: 'problems' },
                ...answer.problems.map((p) =>
                  make(
                    'li',
                    {},
                    make('strong', { text: p.label.charAt(0).toUpperCase() + p.label.slice(1) }),
                    `: ${p.message}`,
                  ),
                ),
              ),
            )
          : make('p', { className: 'success', text: 'No problems: ready to save.' }),
      );
      if (state.graph) {
        for (const b of root.querySelectorAll('.node-list button')) {
          const node = nodeAt(b.firstChild.textContent);
          if (node) b.classList.toggle('has-problem', problemsOf(node).length > 0);
        }
        markProblems();
      }
      wirePicture(box);
      wireEdges(box);
    }

    // --- an edge clicked on the picture: marked, with a button under the picture that removes it ---
    function wireEdges(box) {
      const actions =
        document.getElementById('picture-actions') ??
        make('div', { id: 'picture-actions', className: 'picture-actions' });
      if (!actions.isConnected) box.after(actions);
      actions.replaceChildren();
      for (const g of box.querySelectorAll('g.edge')) {
        const path = g.querySelector('path');
        // A wider, invisible stroke to aim at: the drawn one is 1.5 px.
        const hit = document.createElementNS('http://www.w3.org/2000/svg', 'path');
        hit.setAttribute('d', path.getAttribute('d'));
        hit.setAttribute('class', 'edge-hit');
        g.prepend(hit);
        g.addEventListener('click', () => {
          const branch = g.querySelector('text.branch')?.textContent ?? '';
          const index =
            state.graph?.edges.findIndex(
              (e) => e.from === g.dataset.from && e.to === g.dataset.to && (e.branch ?? '') === branch,
            ) ?? -1;
          if (index < 0) return;
          for (const other of box.querySelectorAll('g.edge.selected')) other.classList.remove('selected');
          g.classList.add('selected');
          const remove = make(
            'button',
            { type: 'button', className: 'danger', id: 'remove-picked-edge' },
            `Remove the edge ${g.dataset.from} → ${g.dataset.to}`,
          );
          remove.addEventListener('click', () => removeEdge(index));
          actions.replaceChildren(remove);
          remove.focus({ preventScroll: true });
        });
      }
    }

    // --- the picture: a box selects its node; dragging from a box to another connects them ---
    function wirePicture(box) {
      const svg = box.querySelector('svg');
      if (!svg || !state.graph) return;
      for (const link of svg.querySelectorAll('a.node-link')) {
        link.addEventListener('click', (event) => {
          event.preventDefault();
          select(link.querySelector('g.node').dataset.node, true);
        });
      }
      let drag = null;
      const point = (event) => new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
      svg.addEventListener('pointerdown', (event) => {
        const node = event.target.closest('g.node');
        if (!node || event.pointerType === 'touch' || event.button !== 0) return;
        event.preventDefault(); // no native drag of the link
        const start = point(event);
        const line = document.createElementNS('http://www.w3.org/2000/svg', 'line');
        line.setAttribute('class', 'drawing');
        for (const [k, v] of Object.entries({ x1: start.x, y1: start.y, x2: start.x, y2: start.y }))
          line.setAttribute(k, v);
        svg.append(line);
        drag = { from: node.dataset.node, line, moved: false };
      });
      svg.addEventListener('pointermove', (event) => {
        if (!drag) return;
        const p = point(event);
        drag.moved = true;
        drag.line.setAttribute('x2', p.x);
        drag.line.setAttribute('y2', p.y);
      });
      const end = (event) => {
        if (!drag) return;
        const { from, line, moved } = drag;
        drag = null;
        line.remove();
        const target = document.elementFromPoint(event.clientX, event.clientY)?.closest('g.node');
        if (!moved || !target) return;
        if (target.dataset.node === from) return;
        addEdge(from, target.dataset.node, undefined);
      };
      svg.addEventListener('pointerup', end);
      svg.addEventListener('pointerleave', () => {
        drag?.line.remove();
        drag = null;
      });
    }

    jsonArea.addEventListener('input', () => {
      render();
      schedulePreview();
    });
    for (const id of ['name', 'description']) document.getElementById(id)?.addEventListener('input', schedulePreview);
    render();
    preview();
  }
}
