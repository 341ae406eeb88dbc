// The wire shapes of runs (openapi.yaml Run, RunStep) made from their stored rows, and what a
// run's event stream says when the run ends. Pure: the service, the runner and the console read
// runs through these.
import type { components } from '../../generated/api.d.ts';
import type { Workflow } from '../workflows/service.ts';
import type { NewRunEvent } from './events.ts';
import type { RunRow, RunStepRow, StreamSoFar } from './store.ts';
import { toText } from './values.ts';
import { costToWire, type CostNanos } from '../shared/prices.ts';

export type Run = components['schemas']['Run'];
export type RunDetail = components['schemas']['RunDetail'];
export type RunStep = components['schemas']['RunStep'];
export type PageMeta = components['schemas']['PageMeta'];

/** The graph snapshot stored with each run. */
export interface GraphSnapshot {
  version: number;
  nodes: Workflow['nodes'];
  edges: Workflow['edges'];
}

export const NO_USAGE = Object.freeze({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The workflow version a run's snapshot was taken at. The snapshot is written `{"version":N,...`
 * (startRun), so the version is read from its start; the whole graph (often large) is parsed
 * only if it does not start so.
 */
export function snapshotVersion(graph: string): number {
  const start = /^\{"version":(\d+)[,}]/.exec(graph);
  return start ? Number(start[1]) : (JSON.parse(graph) as GraphSnapshot).version;
}

type CostColumns = Pick<RunRow, 'cost_nanos' | 'cost_input_nanos' | 'cost_currency'>;

/** A run's or a step's stored cost (its `cost_*` columns; the drivers may answer bigints as strings); null: none. */
export function rowCost(row: CostColumns): CostNanos | null {
  if (row.cost_nanos === null || row.cost_nanos === undefined || !row.cost_currency) return null;
  const input = Number(row.cost_input_nanos ?? 0);
  return { currency: row.cost_currency, input, output: Number(row.cost_nanos) - input };
}

/** The `cost_*` columns of a cost. */
export function costColumns(cost: CostNanos | null | undefined): {
  cost_nanos: number | null;
  cost_input_nanos: number | null;
  cost_currency: string | null;
} {
  if (!cost) return { cost_nanos: null, cost_input_nanos: null, cost_currency: null };
  return { cost_nanos: cost.input + cost.output, cost_input_nanos: cost.input, cost_currency: cost.currency };
}

/** The contract's `Cost` of a row (null: none). */
export function wireCost(row: CostColumns): Run['cost'] {
  const cost = rowCost(row);
  return cost ? costToWire(cost) : null;
}

/** The wire shape of a stored run (openapi.yaml Run). */
export function toRun(row: RunRow): Run {
  return {
    id: row.id,
    workflow_id: row.workflow_id,
    workflow_version: snapshotVersion(row.graph),
    status: row.status,
    ...inputsOf(row.inputs),
    output: row.output === null ? null : (JSON.parse(row.output) as unknown),
    error: row.error === null ? null : (JSON.parse(row.error) as Run['error']),
    usage: row.usage === null ? { ...NO_USAGE } : (JSON.parse(row.usage) as Run['usage']),
    cost: wireCost(row),
    duration: row.duration_ms === null ? null : row.duration_ms / 1000,
    created_at: new Date(row.created_at).toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    ...(row.retry_of ? { retry_of: row.retry_of } : {}),
  };
}

/** The stored inputs as the wire has them: `inputs` as text, and `input_values` when one is not a string. */
function inputsOf(stored: string): Pick<Run, 'inputs' | 'input_values'> {
  const values = JSON.parse(stored) as Record<string, unknown>;
  const entries = Object.entries(values);
  if (entries.every(([, v]) => typeof v === 'string')) return { inputs: values as Record<string, string> };
  return { inputs: Object.fromEntries(entries.map(([k, v]) => [k, toText(v)])), input_values: values };
}

/**
 * What a run's stream says when the run ends (openapi.yaml streamRunEvents): its status, then the
 * run. Ended by a cancel or a sweep (`told` given), first a node.finished for each node the
 * stream has not finished, as a worker's end has them: one under way ended as the run did
 * (`cancelled` or `failed`), one never started `not_started` (a cancelled run's stream
 * had none, though the contract promises one per node).
 */
export function runEndEvents(ended: RunRow, told?: StreamSoFar): NewRunEvent[] {
  return [
    ...(told ? unfinishedNodeEvents(ended, told) : []),
    { type: 'run.status', data: { status: ended.status } },
    { type: 'run.finished', data: toRun(ended) },
  ];
}

function unfinishedNodeEvents(ended: RunRow, told: StreamSoFar): NewRunEvent[] {
  const { nodes } = JSON.parse(ended.graph) as GraphSnapshot;
  const error = ended.error === null ? null : (JSON.parse(ended.error) as { code: string; message: string });
  const finishedAt = ended.finished_at === null ? null : new Date(ended.finished_at).toISOString();
  return nodes
    .filter((node) => !told.finished.has(node.id))
    .map((node) => {
      const started = told.started.has(node.id);
      const status = !started ? 'not_started' : ended.status === 'cancelled' ? 'cancelled' : 'failed';
      const nodeError = started && error ? { code: error.code, message: error.message, node_id: node.id } : null;
      return {
        type: 'node.finished',
        data: {
          node_id: node.id,
          node_type: node.type,
          status,
          finished_at: started ? finishedAt : null,
          output: null,
          usage: null,
          error: nodeError,
        },
      };
    });
}

export function toRunStep(row: RunStepRow): RunStep {
  return {
    node_id: row.node_id,
    node_type: row.node_type as RunStep['node_type'],
    status: row.status as RunStep['status'],
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    input: row.input_preview,
    output: row.output_preview,
    // A value that is not a string is logged as its JSON: whole, it is that value again.
    ...(row.output_json && !row.truncated && row.output_preview !== null
      ? { output_value: JSON.parse(row.output_preview) as unknown }
      : {}),
    truncated: row.truncated,
    usage: row.usage === null ? null : (JSON.parse(row.usage) as RunStep['usage']),
    cost: wireCost(row),
    error: row.error === null ? null : (JSON.parse(row.error) as RunStep['error']),
    // The driver may answer a string (MySQL's, PostgreSQL's integer as number): a count either way.
    ...(row.attempts === null || row.attempts === undefined ? {} : { attempts: Number(row.attempts) }),
    ...(row.reused_from ? { reused_from: row.reused_from } : {}),
    ...(row.chosen_case ? { case: row.chosen_case } : {}),
  };
}
