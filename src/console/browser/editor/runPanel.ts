import { hook, make } from '../dom.ts';
import type { Editor } from './model.ts';
import { stepPart, type PanelActions } from './nodePanel.ts';
import { nodeTestPart } from './nodeTest.ts';
import { inputsOf, postForm, refusal, runMark, savedGraph, type RunDetail } from './runRequests.ts';
import { runWatcher } from './watchRun.ts';

// The editor's Run part (/workflows/{id}/edit, `data-editor-run`: the workflow's console path):
// the run inputs, a Run button that starts a run of the saved graph (said so when the text holds
// unsaved changes), the run followed live (watchRun.ts, each node's status in the editor's model
// and on the node list), and a side panel for the selected node: its part of the run
// (nodePanel.ts) and a test of it alone on pinned values (nodeTest.ts). Status changes are said
// in a live region.

/** The run inputs' fields, one per text_input of the saved graph (`input_<variable>`, as the run form's). */
function inputFields(editor: Editor): { part: HTMLElement; values: () => Record<string, string> } {
  const inputs = inputsOf(savedGraph(editor.jsonArea), editor.typeSpec);
  const areas = inputs.map(({ variable, type }) => {
    const id = `editor-input-${variable}`;
    const area = make('textarea', { id, rows: 2, 'data-run-input': variable });
    const hint = type === 'string' ? '' : ` (${type}, as JSON)`;
    return { variable, type, area, label: make('label', { for: id, text: `${variable}${hint}` }) };
  });
  const part = make('div', { className: 'run-inputs' }, ...areas.flatMap((a) => [a.label, a.area]));
  return { part, values: () => Object.fromEntries(areas.map((a) => [`input_${a.variable}`, a.area.value])) };
}

/** The run inputs as values for a node test: typed ones read as JSON, text as it is. */
function typedInputs(editor: Editor, fields: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    inputsOf(savedGraph(editor.jsonArea), editor.typeSpec).map(({ variable, type }) => {
      const text = fields[`input_${variable}`] ?? '';
      if (type === 'string') return [variable, text];
      try {
        return [variable, JSON.parse(text) as unknown];
      } catch {
        return [variable, text];
      }
    }),
  );
}

/** Keeps each node list button's run mark current, in place (the list keeps its focus). */
function markButtons(editor: Editor): void {
  for (const button of editor.root.querySelectorAll<HTMLElement>('[data-node-button]')) {
    const mark = runMark(editor.state.run, button.dataset.nodeButton ?? '');
    const was = button.querySelector('[data-run-status]');
    if (mark && was) was.replaceWith(mark);
    else if (mark) button.append(mark);
    else was?.remove();
  }
}

/** The Run part's state and drawing: the watched run's steps as last read, and the node the panel shows. */
class RunPart {
  private detail: RunDetail | null = null;
  private drawnFor: string | null | undefined;
  private reading: ReturnType<typeof setTimeout> | undefined;
  readonly announcer = make('p', {
    id: 'editor-run-announce',
    role: 'status',
    'aria-live': 'polite',
    className: 'hint',
  });
  readonly panel = make('section', {
    id: 'node-panel',
    'aria-labelledby': 'node-panel-heading',
    'data-node-panel': true,
  });
  readonly runButton = make('button', { type: 'button', className: 'primary', id: 'editor-run-start' }, 'Run');
  readonly unsaved = make('p', { className: 'notice', 'data-unsaved': true, hidden: true });
  readonly inputs: ReturnType<typeof inputFields>;
  readonly watcher: ReturnType<typeof runWatcher>;
  private readonly actions: PanelActions;

  private readonly editor: Editor;
  private readonly base: string;

  constructor(editor: Editor, base: string) {
    this.editor = editor;
    this.base = base;
    this.inputs = inputFields(editor);
    const announce = (text: string) => this.announce(text);
    this.watcher = runWatcher(editor, base, { announce, changed: () => this.readRun() });
    this.actions = {
      base,
      announce,
      follow: (id: string) => {
        this.detail = null;
        this.watcher.follow(id);
        this.drawPanel(false);
      },
      refresh: () => this.readRun(),
    };
  }

  announce(text: string): void {
    this.announcer.textContent = text;
  }

  /** The panel for the selected node; its test form is drawn anew only when asked (a new node), so what is typed in it stays. */
  drawPanel(withTest: boolean): void {
    const { editor, panel } = this;
    const id = editor.state.selected;
    this.drawnFor = id;
    const graph = savedGraph(editor.jsonArea);
    if (!id || !graph?.nodes.some((n) => n.id === id)) {
      const text = id ? `Node ${id} is not saved yet: save to run or test it.` : 'Select a node.';
      return panel.replaceChildren(
        make('h3', { id: 'node-panel-heading', text: 'Selected node' }),
        make('p', { text }),
      );
    }
    const step = make('div', { 'data-panel-step': id }, stepPart(this.detail, editor.state.run, id, this.actions));
    const inputs = () => typedInputs(editor, this.inputs.values());
    const test = withTest
      ? nodeTestPart(this.base, graph, id, this.detail, inputs, (text) => this.announce(text))
      : panel.querySelector('[data-node-test]');
    panel.replaceChildren(make('h3', { id: 'node-panel-heading', text: `Node ${id}` }), step, test ?? '');
  }

  /** Reads the watched run's steps again (shortly, once for a burst of events) and redraws the panel. */
  readRun(): void {
    clearTimeout(this.reading);
    this.reading = setTimeout(() => {
      const runId = this.editor.state.run?.id;
      if (!runId) return;
      void fetch(`${this.base}/runs/${runId}/detail`, { cache: 'no-store', redirect: 'error' })
        .then(async (res) => {
          if (!res.ok || this.editor.state.run?.id !== runId) return;
          this.detail = ((await res.json()) as { data: RunDetail }).data;
          this.drawPanel(
            this.drawnFor !== this.editor.state.selected || this.panel.querySelector('[data-node-test]') === null,
          );
        })
        .catch(() => undefined);
    }, 150);
  }

  start(): void {
    this.runButton.disabled = true;
    this.announce('Starting the run…');
    void postForm(`${this.base}/editor/run`, this.inputs.values())
      .then(async (res) => {
        if (!res.ok) return this.announce(`Not started: ${await refusal(res)}`);
        const run = ((await res.json()) as { data: { id: string } }).data;
        this.actions.follow(run.id);
        this.announce(`Run ${run.id} started.`);
      })
      .catch(() => this.announce('Not started: the service could not be reached.'))
      .finally(() => {
        this.runButton.disabled = false;
      });
  }

  /** After the builder handled an event: the node list's marks again, the unsaved note, the panel for a new selection. */
  afterBuilder(): void {
    markButtons(this.editor);
    const changed = this.editor.jsonArea.value !== this.editor.jsonArea.defaultValue;
    this.unsaved.hidden = !changed;
    this.unsaved.textContent = changed
      ? 'The graph has unsaved changes: Run runs the saved graph. Save to run them.'
      : '';
    if (this.drawnFor !== this.editor.state.selected) this.drawPanel(true);
  }
}

function startRunPart(editor: Editor, section: HTMLElement, base: string) {
  const part = new RunPart(editor, base);
  part.runButton.addEventListener('click', () => part.start());
  editor.root.addEventListener('editor-run', () => markButtons(editor));
  // The builder redraws the node list on many changes: the marks are drawn again after it, and the panel follows the selection.
  const after = () => setTimeout(() => part.afterBuilder(), 0);
  for (const type of ['click', 'keyup', 'input', 'change']) document.addEventListener(type, after);
  window.addEventListener('hashchange', after);
  section.replaceChildren(
    make('h2', { id: 'editor-run-heading', text: 'Run' }),
    make('p', {
      className: 'hint',
      text: 'Runs the saved workflow with these inputs and shows each node’s status as it goes.',
    }),
    part.inputs.part,
    part.unsaved,
    make('p', {}, part.runButton),
    part.announcer,
    part.panel,
  );
  section.setAttribute('aria-labelledby', 'editor-run-heading');
  // Drawn by script only: without it, runs start from the workflow's page (the Cancel link's).
  section.hidden = false;
  part.afterBuilder();
  part.drawPanel(true);
}

/** Starts the Run part where the page has one (an existing workflow's editor). */
export function startRunPanel(editor: Editor): void {
  const section = document.querySelector<HTMLElement>('[data-editor-run]');
  const base = section?.dataset.editorRun;
  if (section && base && document.querySelector(hook('data-editor-run', base))) startRunPart(editor, section, base);
}
