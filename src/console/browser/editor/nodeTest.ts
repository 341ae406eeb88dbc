import { make } from '../dom.ts';
import type { Graph } from './model.ts';
import { postForm, pre, refusal, type RunDetail } from './runRequests.ts';

// "Test this node": runs the selected node of the saved graph alone (the API's testWorkflowNode,
// through the console's editor route) on pinned values: one field per node with an edge into it,
// prefilled from the watched run's outputs, and the run inputs as the Run part's fields hold them.
// A field whose text reads as a JSON object or list is pinned as that value (a typed upstream
// output, as the last run gave it); any other text is pinned as text. The result says the status,
// output, error, tokens and each step of the test.

interface TestResult {
  status: string;
  output: string | null;
  error: { code: string; message: string } | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  duration: number;
  logs: { node_id: string; status: string; case?: string }[];
}

/** A pinned field's text as the value it stands for. */
function pinnedValue(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return text;
  }
}

/** A step's output as the field's text: a value that is not a string as its JSON. */
function outputText(run: RunDetail | null, nodeId: string): string {
  const step = run?.logs.find((s) => s.node_id === nodeId);
  if (!step) return '';
  if (step.output_value !== undefined) return JSON.stringify(step.output_value, null, 2);
  return step.output ?? '';
}

function resultPart(result: TestResult): HTMLElement {
  const tokens = `${result.usage.total_tokens} tokens (${result.usage.prompt_tokens} in, ${result.usage.completion_tokens} out)`;
  return make(
    'div',
    { 'data-test-result': result.status },
    make('p', {}, make('strong', { text: `Test ${result.status}` }), ` in ${result.duration.toFixed(2)} s, ${tokens}.`),
    result.error
      ? make(
          'div',
          { className: 'error' },
          make('p', {}, make('strong', { text: result.error.code }), `: ${result.error.message}`),
        )
      : null,
    result.output !== null ? pre(result.output) : null,
    make('p', { text: 'Steps:' }),
    make(
      'ul',
      {},
      ...result.logs.map((s) =>
        make('li', { text: `${s.node_id}: ${s.status}${s.case !== undefined ? `, case ${s.case}` : ''}` }),
      ),
    ),
  );
}

/** The test form for `nodeId`; `inputs()` reads the run inputs' fields. */
export function nodeTestPart(
  base: string,
  graph: Graph,
  nodeId: string,
  run: RunDetail | null,
  inputs: () => Record<string, unknown>,
  announce: (text: string) => void,
): HTMLElement {
  const sources = [...new Set(graph.edges.filter((e) => e.to === nodeId).map((e) => e.from))];
  const fields = sources.map((from) => {
    const id = `pin-${from}`;
    const area = make('textarea', { id, rows: 3, spellcheck: 'false', 'data-pin': from, className: 'code' });
    area.value = outputText(run, from);
    return { from, area, label: make('label', { for: id, text: `Output of ${from}` }) };
  });
  const out = make('div', { 'data-test-output': true });
  const button = make('button', { type: 'button', id: 'test-node' }, 'Test this node');
  // A group, not a form: the Run part sits inside the editor's own form, which a form cannot nest in.
  const form = make(
    'div',
    { role: 'group', 'aria-labelledby': 'test-node-heading', 'data-node-test': nodeId },
    make('h4', { id: 'test-node-heading', text: `Test ${nodeId} alone` }),
    make('p', {
      className: 'hint',
      text: sources.length
        ? 'Pinned values of what feeds it (from the last run when there is one); the run inputs above. Nothing is stored.'
        : 'Nothing feeds this node: it runs on the run inputs above. Nothing is stored.',
    }),
    ...fields.flatMap((f) => [f.label, f.area]),
    button,
    out,
  );
  button.addEventListener('click', () => {
    const upstream = Object.fromEntries(fields.map((f) => [f.from, pinnedValue(f.area.value)]));
    button.disabled = true;
    out.replaceChildren(make('p', { text: 'Testing…' }));
    void (async () => {
      try {
        const body = JSON.stringify({ inputs: inputs(), upstream });
        const res = await postForm(`${base}/editor/nodes/${encodeURIComponent(nodeId)}/test`, { body });
        if (!res.ok) {
          const why = await refusal(res);
          out.replaceChildren(make('div', { className: 'error', role: 'alert' }, make('p', { text: why })));
          return;
        }
        const result = ((await res.json()) as { data: TestResult }).data;
        out.replaceChildren(resultPart(result));
        announce(`Test of ${nodeId}: ${result.status}.`);
      } catch {
        out.replaceChildren(
          make('p', { className: 'error', text: 'The test could not be sent: check the connection.' }),
        );
      } finally {
        button.disabled = false;
      }
    })();
  });
  return form;
}
