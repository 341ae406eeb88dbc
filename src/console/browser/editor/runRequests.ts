import { make } from '../dom.ts';
import { readGraph, type Graph, type WatchedRun } from './model.ts';
import type { NodeTypeSpec } from '../../editorTypes.ts';

// What the editor's run panel asks the service (src/console/pages/editorRuns.ts and the run
// page's forms), and the small pieces its parts share. Every POST carries the editor form's CSRF
// token, as the page's own forms do.

/** A run's step, as the API's RunStep. */
export interface Step {
  node_id: string;
  node_type: string;
  status: string;
  input: string | null;
  output: string | null;
  output_value?: unknown;
  attempts?: number;
  case?: string;
  reused_from?: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  cost?: { total: number; currency: string } | null;
  error: { code: string; message: string } | null;
}

/** A run with its steps, as the API's RunDetail. */
export interface RunDetail {
  id: string;
  status: string;
  inputs: Record<string, string>;
  error: { code: string; message: string; node_id?: string } | null;
  logs: Step[];
}

/** A refusal's words: the problem's detail, and each item's pointer and message. */
export async function refusal(res: Response): Promise<string> {
  const problem = (await res.json().catch(() => ({}))) as {
    detail?: string;
    errors?: { pointer: string; message: string }[];
  };
  const items = (problem.errors ?? []).map((e) => `${e.pointer.split('/').pop() ?? ''} ${e.message}`);
  return [problem.detail ?? `The service answered ${res.status}.`, ...items].join(' ');
}

/** POSTs the fields as a form with the page's CSRF token. */
export function postForm(url: string, fields: Record<string, string>): Promise<Response> {
  const csrf = document.querySelector<HTMLInputElement>('form.editor input[name=csrf_token]')?.value ?? '';
  return fetch(url, {
    method: 'POST',
    body: new URLSearchParams({ csrf_token: csrf, ...fields }),
    headers: { Accept: 'application/json' },
    cache: 'no-store',
  });
}

/** The graph as saved (the JSON text as the page served it): what a run or a node test runs. */
export function savedGraph(jsonArea: HTMLTextAreaElement): Graph | null {
  const read = readGraph(jsonArea.defaultValue);
  return 'graph' in read ? read.graph : null;
}

/** The saved graph's run inputs: the variable and declared type of each node no edge may enter (a run input, as the registry says). */
export function inputsOf(
  graph: Graph | null,
  specs: ReadonlyMap<string, NodeTypeSpec>,
): { variable: string; type: string }[] {
  return (graph?.nodes ?? []).flatMap((n) =>
    specs.get(n.type)?.noEdgeIn && typeof n.config.variable === 'string'
      ? [{ variable: n.config.variable, type: typeof n.config.type === 'string' ? n.config.type : 'string' }]
      : [],
  );
}

/** A node's status in the watched run, in words (never colour alone): `completed, case urgent`. */
export function runWords(run: WatchedRun | null, nodeId: string): string | null {
  const node = run?.nodes[nodeId];
  if (!node) return null;
  return `${node.status.replace('_', ' ')}${node.case !== undefined ? `, case ${node.case}` : ''}`;
}

/** The node list button's mark of the node's status in the watched run (builder.ts draws it, runPanel.ts keeps it current). */
export function runMark(run: WatchedRun | null, nodeId: string): HTMLElement | null {
  const words = runWords(run, nodeId);
  if (words === null) return null;
  const status = run!.nodes[nodeId]!.status;
  return make('small', { className: `run-mark status-${status}`, 'data-run-status': status, text: ` · ${words}` });
}

export const pre = (text: string) => make('pre', {}, text);
