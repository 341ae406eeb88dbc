import type { Run } from '../../runs/service.ts';
import type { Workflow } from '../../workflows/service.ts';
import { html, type Html } from '../../html/html.ts';
import type { PageUser } from './format.ts';

// What a user does with a run from its page: cancel it while it goes on; retry it once it failed or
// was cancelled (the API's retryRun: the same inputs on the same version, resumed from where it
// stopped, the steps it completed reused); run the workflow again with its inputs in the form to
// edit; or start the same run from a terminal (copy as curl).

const ENDED = ['completed', 'failed', 'cancelled'];

/** A string in single quotes for a POSIX shell: a quote inside ends the string, adds an escaped quote and starts again. */
export const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The curl command that starts a run of the workflow with these inputs through the API (the API
 * key is left as $API_KEY: the console never has one in plaintext).
 */
export function curlForRunStart(baseUrl: string, workflowId: string, inputs: Record<string, unknown>): string {
  return [
    `curl -sS -X POST ${shellQuote(`${baseUrl}/api/workflows/${workflowId}/run`)}`,
    `  -H "Authorization: Bearer $API_KEY"`,
    `  -H 'Content-Type: application/json'`,
    `  -d ${shellQuote(JSON.stringify({ inputs }))}`,
  ].join(' \\\n');
}

/** The command in a block, with a Copy button (console.js) for the whole command. */
export const curlBlock = (command: string, label: string): Html =>
  html`<details class="snippet curl"><summary>${label}</summary><p><small>Set <code>API_KEY</code> to an access token with the <code>workflows</code> permission (<a href="/settings/tokens">Access tokens</a>).</small></p><pre tabindex="0"><code data-copy="curl command">${command}</code></pre></details>`;

export interface RunControlsModel {
  user: PageUser;
  baseUrl: string;
  workflowId: string;
  run: Run;
  /** The workflow as it is now; undefined once deleted (nothing can start then). */
  workflow?: Workflow | undefined;
}

/** Why Retry is not offered for a run that failed or was cancelled; undefined when it is. */
export function retryRefusal(_run: Run, workflow: Workflow | undefined): string | undefined {
  // A workflow changed since still retries the run on the version it ran (its snapshot is kept).
  return workflow ? undefined : 'The workflow was deleted, so it cannot run again.';
}

export function runControls({ user, baseUrl, workflowId, run, workflow }: RunControlsModel): Html {
  const runPath = `/workflows/${workflowId}/runs/${run.id}`;
  const csrf = html`<input type="hidden" name="csrf_token" value="${user.csrf}">`;
  const ended = ENDED.includes(run.status);
  const refusal = retryRefusal(run, workflow);
  const retryable = ended && run.status !== 'completed';
  return html`<div class="run-actions">${
    ended
      ? ''
      : html`<form method="post" action="${runPath}/cancel" id="cancel-run" data-cancel-run>${csrf}<button type="submit" class="danger">Cancel run</button></form>`
  }${
    retryable && !refusal
      ? html`<form method="post" action="${runPath}/retry">${csrf}<button type="submit" class="primary" id="retry-run">Retry</button> <small>from where it stopped: the same inputs on version ${run.workflow_version ?? workflow!.version}, the steps it completed reused</small></form>`
      : ''
  }${workflow ? html`<a class="button" href="/workflows/${workflowId}?inputs_from=${run.id}#run-heading" id="run-again">Run again with these inputs</a>` : ''}
${retryable && refusal ? html`<p><small>${refusal}</small></p>` : ''}
${workflow ? curlBlock(curlForRunStart(baseUrl, workflowId, run.inputs), 'Start this run from a terminal (curl)') : ''}</div>`;
}
