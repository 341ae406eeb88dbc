import { make } from '../dom.ts';
import { postForm, pre, runWords, type RunDetail, type Step } from './runRequests.ts';
import type { WatchedRun } from './model.ts';

// The side panel's part about the selected node in the watched run: its status (and chosen case),
// attempts, tokens and cost, input, output and error as the run's steps give them; Approve and
// Reject when it waits for an answer (the run page's own resume form, as its owner); and, when
// the run failed or was cancelled, Retry from the failed node (the run page's retry: a new run
// that reuses what completed and starts again at the node that failed).

export interface PanelActions {
  base: string;
  announce(text: string): void;
  /** A new run to follow (the retry's). */
  follow(runId: string): void;
  /** Read the run's steps again (after an answer). */
  refresh(): void;
}

const ENDED_BADLY = ['failed', 'cancelled'];

function facts(step: Step, words: string | null): HTMLElement {
  const row = (term: string, value: string) => make('div', {}, make('dt', { text: term }), make('dd', { text: value }));
  const usage = step.usage
    ? `${step.usage.total_tokens} (${step.usage.prompt_tokens} in, ${step.usage.completion_tokens} out)`
    : 'none';
  return make(
    'dl',
    { className: 'facts', 'data-step-facts': step.node_id },
    row('Status', words ?? step.status),
    ...(step.case !== undefined ? [row('Case taken', step.case)] : []),
    row('Attempts', step.attempts !== undefined ? String(step.attempts) : '—'),
    row('Tokens', usage),
    ...(step.cost ? [row('Cost', `${step.cost.total} ${step.cost.currency}`)] : []),
    ...(step.reused_from ? [row('Reused from', step.reused_from)] : []),
  );
}

/** Approve / Reject, posted as the run page's answer form would (`approved`: true or false). */
function approvalPart(run: RunDetail, step: Step, actions: PanelActions): HTMLElement {
  const out = make('p', { 'data-approval-result': true });
  const answer = (approved: boolean) => async () => {
    const res = await postForm(`${actions.base}/runs/${run.id}/resume`, {
      node_id: step.node_id,
      approved: String(approved),
    }).catch(() => undefined);
    if (res?.ok) {
      out.textContent = approved ? 'Approved: the run goes on.' : 'Rejected: the run goes on with that answer.';
      actions.announce(out.textContent);
      actions.refresh();
    } else {
      out.replaceChildren(
        'The answer was not taken (the run no longer waits, or its form asks more). ',
        make('a', { href: `${actions.base}/runs/${run.id}`, text: 'Answer on the run’s page' }),
      );
    }
  };
  const approve = make('button', { type: 'button', className: 'primary', 'data-approve': step.node_id }, 'Approve');
  const reject = make('button', { type: 'button', 'data-reject': step.node_id }, 'Reject');
  approve.addEventListener('click', () => void answer(true)());
  reject.addEventListener('click', () => void answer(false)());
  return make(
    'section',
    { className: 'approval', 'aria-labelledby': 'panel-approval-heading' },
    make('h4', { id: 'panel-approval-heading', text: 'Waiting for an answer' }),
    pre(step.input ?? ''),
    make('p', {}, approve, ' ', reject),
    out,
  );
}

function retryPart(run: RunDetail, actions: PanelActions): HTMLElement {
  const button = make('button', { type: 'button', 'data-retry-run': run.id }, 'Retry from the failed node');
  const out = make('p', {});
  button.addEventListener('click', () => {
    button.disabled = true;
    void (async () => {
      // The run page's retry answers with a redirect to the new run's page: its address names it.
      const res = await postForm(`${actions.base}/runs/${run.id}/retry`, {}).catch(() => undefined);
      const id = res?.ok ? /\/runs\/([^/?#]+)$/.exec(new URL(res.url).pathname)?.[1] : undefined;
      if (id && id !== run.id) {
        actions.announce(`Retrying: run ${id}.`);
        return actions.follow(id);
      }
      button.disabled = false;
      out.textContent = 'The retry was refused: open the run’s page to see why.';
    })();
  });
  return make('p', {}, button, out);
}

/** The selected node's part of the watched run. */
export function stepPart(
  run: RunDetail | null,
  watched: WatchedRun | null,
  nodeId: string,
  actions: PanelActions,
): HTMLElement {
  if (!watched)
    return make('p', { className: 'hint', text: 'Run the workflow to see this node’s input and output here.' });
  const step = run?.id === watched.id ? run.logs.find((s) => s.node_id === nodeId) : undefined;
  const words = runWords(watched, nodeId);
  if (!step)
    return make('p', { 'data-step-facts': nodeId, text: words ? `Status: ${words}.` : 'Not reached yet in this run.' });
  const runLink = make('a', { href: `${actions.base}/runs/${watched.id}`, text: `run ${watched.id}` });
  return make(
    'div',
    {},
    make('p', {}, 'In ', runLink, ':'),
    facts(step, words),
    ...(step.status === 'waiting' && run!.status === 'waiting' ? [approvalPart(run!, step, actions)] : []),
    step.error
      ? make(
          'div',
          { className: 'error' },
          make('p', {}, make('strong', { text: step.error.code }), `: ${step.error.message}`),
        )
      : null,
    ...(ENDED_BADLY.includes(run!.status) && run!.error?.node_id === nodeId ? [retryPart(run!, actions)] : []),
    make('h4', { text: 'Input' }),
    step.input !== null ? pre(step.input) : make('p', { text: '—' }),
    make('h4', { text: 'Output' }),
    step.output !== null ? pre(step.output) : make('p', { text: '—' }),
  );
}
