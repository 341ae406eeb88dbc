import { formatDuration, formatMoney, isoDate, secondsBetween, statusWords, tokenSplit } from '../format.ts';
import { hook, make } from './dom.ts';

// What a run's event stream says (GET .../runs/{run_id}/events, the API's RunEvent), as the run
// page draws it: each handler rewrites the node's row (src/console/views/runs.ts: `data-step`, its
// cells by `data-field`) and box (views/graphSvg.ts: `data-node`, `data-label`) as the server
// would render them, with the same formatters.

interface Usage {
  total_tokens: number;
  prompt_tokens: number;
  completion_tokens: number;
}
export interface RunStatusEvent {
  status: string;
}
interface NodeStarted {
  node_id: string;
  started_at: string;
}
interface NodeDelta {
  node_id: string;
  text: string;
}
interface NodeProgress {
  node_id: string;
  done: number;
  total: number;
  failed?: number;
}
interface NodeFinished {
  node_id: string;
  status: string;
  finished_at: string;
  usage?: Usage | null;
  cost?: { currency: string; total: number } | null;
  error?: { code: string; message: string } | null;
  output?: unknown;
  /** A switch's chosen case. */
  case?: string;
}

const badge = (status: string) => make('span', { className: `badge status-${status}` }, statusWords(status));
const small = (text: string) => make('small', {}, text);
const outputText = (value: unknown) =>
  make('pre', {}, typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/** Follows one run's events on its page: `live` is the part that holds the run's state. */
export function runEventHandlers(live: HTMLElement) {
  const startedAt = new Map<string, string>();
  const rowOf = (id: string) => live.querySelector<HTMLTableRowElement>(hook('data-step', id));
  const cellOf = (id: string, field: 'status' | 'time' | 'usage' | 'output') =>
    rowOf(id)?.querySelector<HTMLElement>(hook('data-field', field)) ?? null;

  const setNodeStatus = (id: string, status: string) => {
    const row = rowOf(id);
    if (row) row.className = `step status-${status}`;
    cellOf(id, 'status')?.replaceChildren(badge(status));
    const box = live.querySelector<SVGGElement>(`g${hook('data-node', id)}`);
    if (!box) return;
    box.setAttribute('class', `${(box.getAttribute('class') ?? '').replace(/ status-\S+/, '')} status-${status}`);
    const label = box.dataset.label ?? '';
    const type = box.querySelector(hook('data-field', 'type'));
    if (type) type.textContent = `${label} · ${statusWords(status)}`;
    const title = box.querySelector(hook('data-field', 'title'));
    if (title) title.textContent = `${id} (${label}): ${statusWords(status)}`;
  };
  const setTime = (id: string, from: string | undefined, to: string | null) => {
    const cell = cellOf(id, 'time');
    if (!cell) return;
    if (!from) return cell.replaceChildren(small('—'));
    cell.replaceChildren(small(isoDate(from)), make('br'), formatDuration(secondsBetween(from, to)));
  };
  const setUsage = (id: string, usage: Usage | null | undefined, cost: NodeFinished['cost']) => {
    const cell = cellOf(id, 'usage');
    if (!cell) return;
    if (!usage) return cell.replaceChildren(small('—'));
    const label = make('span', { className: 'cell-label' }, ' tokens');
    cell.replaceChildren(String(usage.total_tokens), label, make('br'), small(tokenSplit(usage)));
    if (cost) cell.append(make('br'), make('small', { 'data-field': 'cost' }, formatMoney(cost.total, cost.currency)));
  };
  const finishedOutput = (data: NodeFinished): Node[] => {
    if (data.error) {
      const line = make('p', {}, make('strong', {}, data.error.code), `: ${data.error.message}`);
      return [make('div', { className: 'error' }, line), ...(data.output ? [outputText(data.output)] : [])];
    }
    if (data.status === 'skipped') return [small('Skipped: on a branch not taken.')];
    if (data.status === 'not_started') return [small('Not started: the run ended first.')];
    // As the server draws it (views/runs.ts nodeRow): the case taken above the value passed on.
    const taken =
      data.case === undefined ? [] : [make('p', { 'data-field': 'case' }, 'Took case ', make('code', {}, data.case))];
    if (data.output !== null && data.output !== undefined) return [...taken, outputText(data.output)];
    return [small('—')];
  };

  return {
    'run.status': (data: RunStatusEvent) =>
      live.querySelector('[data-run-status]')?.replaceChildren(badge(data.status)),
    'node.started': (data: NodeStarted) => {
      startedAt.set(data.node_id, data.started_at);
      setNodeStatus(data.node_id, 'running');
      setTime(data.node_id, data.started_at, null);
      cellOf(data.node_id, 'output')?.replaceChildren(small('Working…'));
    },
    'node.delta': (data: NodeDelta) => {
      const cell = cellOf(data.node_id, 'output');
      if (!cell) return;
      let pre = cell.querySelector('pre');
      if (!pre) cell.replaceChildren((pre = make('pre')));
      pre.append(data.text);
    },
    // A map's items send no events of their own: its row counts them.
    'node.progress': (data: NodeProgress) => {
      const failed = data.failed ? `, ${data.failed} failed` : '';
      cellOf(data.node_id, 'output')?.replaceChildren(small(`${data.done} of ${data.total} items done${failed}…`));
    },
    'node.finished': (data: NodeFinished) => {
      setNodeStatus(data.node_id, data.status);
      setTime(data.node_id, startedAt.get(data.node_id), data.finished_at);
      setUsage(data.node_id, data.usage, data.cost);
      cellOf(data.node_id, 'output')?.replaceChildren(...finishedOutput(data));
    },
  };
}
