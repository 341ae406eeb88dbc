import { findNodeDefinition } from '../../nodes/registry.ts';
import type { GraphSnapshot, RunDetail, RunMark, RunStep } from '../../runs/service.ts';

// A run's timeline, as numbers: one row per node of the graph with the spans it spent queued,
// running (each attempt at its model or URL apart), waiting before a retry, and waiting for an
// approval's answer; and the run's own row (queued, running, waiting). Pure: the view draws it.
//
// Where the times come from: a step's started_at and finished_at (the log); its starts, retries
// and waits from the run's events (`marks`), since an approval answered is logged afresh (its
// step's started_at is then the resume) and a retry is only an event (its `failed_at` and
// `delay_ms`). A retry event without `failed_at` (stored before it had one) draws no segment: the
// row still says how many attempts it took.

export type SegmentKind = 'queued' | 'running' | 'retry' | 'waiting';

export interface Segment {
  kind: SegmentKind;
  /** Milliseconds since the epoch. */
  from: number;
  to: number;
  /** A running segment's attempt (1, 2, ...) when the node was retried; the attempt to come for a retry's wait. */
  attempt?: number;
}

export interface TimelineRow {
  id: string;
  type: string;
  status: string;
  segments: Segment[];
  /** From its first start to its end (queued time aside); null when it never started here. */
  took: number | null;
  /** Calls to its model or URL, when more than one. */
  attempts?: number;
  /** A map's items, counted from the steps shown (`itemsCut`: the run's detail leaves some steps out, so there may be more). */
  items?: number;
  itemsCut?: boolean;
  /** Rows under it: a map's first items or an agent's first calls (`type` `item` or `call`), a called workflow's nodes (`child`). */
  children?: TimelineRow[];
  child?: boolean;
  /** Why it has no bar: skipped, not started, reused from the run retried. */
  note?: string;
}

export interface Timeline {
  /** The run's creation: 0 on the axis. */
  origin: number;
  /** The run's end, or now while it goes on. */
  end: number;
  run: TimelineRow;
  rows: TimelineRow[];
  /** The node that took longest, when one started. */
  slowest?: string;
}

/** A node's queued time is drawn when it is at least this share of the axis (a few milliseconds between a node's inputs and its start are no queue). */
const QUEUED_MIN_SHARE = 0.01;

const ms = (iso: string | null | undefined): number | null => {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : null;
};
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** A node's spans from its marks (or, without them, its step's start), up to `stepEnd`. */
function nodeSegments(marks: readonly RunMark[], step: RunStep, stepEnd: number): Segment[] {
  const segments: Segment[] = [];
  let open: Segment | null = null;
  const close = (t: number) => {
    if (open) segments.push({ ...open, to: Math.max(open.from, t) });
    open = null;
  };
  for (const mark of marks) {
    const data = mark.data;
    if (mark.type === 'node.started') {
      const t = ms(data.started_at as string);
      if (t === null) continue;
      close(t);
      open = { kind: 'running', from: t, to: t };
    } else if (mark.type === 'node.waiting') {
      // An approval waits as soon as it starts: its run so far is its wait.
      if (open) open.kind = 'waiting';
    } else if (mark.type === 'node.retry') {
      const t = ms(data.failed_at as string);
      const attempt = num(data.attempt);
      if (t === null || attempt === null || !open) continue;
      if (open.kind === 'running' && open.attempt === undefined) open.attempt = attempt - 1;
      close(t);
      const resumeAt = t + Math.max(0, num(data.delay_ms) ?? 0);
      segments.push({ kind: 'retry', from: t, to: Math.min(resumeAt, Math.max(t, stepEnd)), attempt });
      open = { kind: 'running', from: resumeAt, to: resumeAt, attempt };
    }
  }
  if (!segments.length && !open) {
    const started = ms(step.started_at);
    if (started !== null)
      open = { kind: step.status === 'waiting' ? 'waiting' : 'running', from: started, to: started };
  }
  close(stepEnd);
  return segments;
}

/** A map's items drawn at most: the rest are counted (the run's API steps list them all). */
export const ITEM_ROWS_MAX = 20;

/**
 * A map's items (`<map>[<i>].<node>` steps; an agent's tool calls are named so too, `kind` says
 * which), each one running span from its first step's start to its last's end; in index order.
 */
function itemRows(
  mapId: string,
  logs: readonly RunStep[],
  axis: { origin: number; end: number },
  kind: 'item' | 'call',
): TimelineRow[] {
  const byItem = new Map<number, RunStep[]>();
  for (const s of logs) {
    const match = /^\[(\d+)\]\./.exec(s.node_id.slice(mapId.length));
    if (!s.node_id.startsWith(mapId) || !match) continue;
    const index = Number(match[1]);
    (byItem.get(index) ?? byItem.set(index, []).get(index)!).push(s);
  }
  return [...byItem.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, steps]) => {
      const starts = steps.flatMap((s) => ms(s.started_at) ?? []);
      const running = steps.some((s) => s.status === 'running' || s.status === 'waiting');
      const ends = steps.flatMap((s) => ms(s.finished_at) ?? []);
      const status = steps.some((s) => s.status === 'failed') ? 'failed' : running ? 'running' : 'completed';
      const row: TimelineRow = { id: `${mapId}[${index}]`, type: kind, status, segments: [], took: null };
      if (!starts.length) return { ...row, status: steps[0]!.status, note: 'skipped' };
      const from = Math.max(axis.origin, Math.min(...starts));
      const to = Math.min(axis.end, Math.max(from, running || !ends.length ? axis.end : Math.max(...ends)));
      return { ...row, segments: [{ kind: 'running', from, to }], took: to - from };
    });
}

/** A called workflow's nodes (`<node>.<its node>` steps, a level deep), each its own span, in the order they started. */
function innerRows(nodeId: string, logs: readonly RunStep[], axis: { origin: number; end: number }): TimelineRow[] {
  return logs.flatMap((s): TimelineRow[] => {
    if (!s.node_id.startsWith(`${nodeId}.`) || !/^[A-Za-z0-9_-]+$/.test(s.node_id.slice(nodeId.length + 1))) return [];
    const row: TimelineRow = {
      id: s.node_id,
      type: s.node_type,
      status: s.status,
      segments: [],
      took: null,
      child: true,
    };
    const from = ms(s.started_at);
    if (from === null) return [{ ...row, note: s.status === 'skipped' ? 'skipped' : 'not started' }];
    const start = Math.max(axis.origin, from);
    const to = Math.min(axis.end, Math.max(start, ms(s.finished_at) ?? axis.end));
    return [{ ...row, segments: [{ kind: 'running' as const, from: start, to }], took: to - start }];
  });
}

const runEndedStatus = (status: string) => ['completed', 'failed', 'cancelled'].includes(status);

/** A log entry for a node whose start is known only from its event. */
const startedStep = (node: GraphSnapshot['nodes'][number]): RunStep => ({
  node_id: node.id,
  node_type: node.type,
  status: 'running',
  started_at: null,
  finished_at: null,
  input: null,
  output: null,
  truncated: false,
  usage: null,
  error: null,
});

/** The spans of one node of the graph, and what its row says. */
function nodeRow(
  node: GraphSnapshot['nodes'][number],
  step: RunStep | undefined,
  marks: readonly RunMark[],
  ready: number | null,
  axis: { origin: number; end: number },
  run: RunDetail,
): TimelineRow {
  const status = step?.status ?? (runEndedStatus(run.status) ? 'not_started' : 'pending');
  const row: TimelineRow = { id: node.id, type: node.type, status, segments: [], took: null };
  if (step?.attempts && step.attempts > 1) row.attempts = step.attempts;
  const items = itemRows(node.id, run.logs, axis, findNodeDefinition(node.type)?.listsCalls ? 'call' : 'item');
  if (items.length) {
    row.items = items.length;
    if (run.logs_truncated) row.itemsCut = true;
  }
  const children = [...items.slice(0, ITEM_ROWS_MAX), ...innerRows(node.id, run.logs, axis).slice(0, ITEM_ROWS_MAX)];
  if (children.length) row.children = children;
  if (step?.reused_from) return { ...row, note: `reused from ${step.reused_from}` };
  // Its start's event may be stored before its log entry (both are written behind the worker): running.
  if (!step && !runEndedStatus(run.status) && marks.some((m) => m.type === 'node.started'))
    return nodeRow(node, { ...startedStep(node), status: 'running' }, marks, ready, axis, run);
  if (!step || (step.started_at === null && !marks.some((m) => m.type === 'node.started'))) {
    const note = status === 'skipped' ? 'skipped' : status === 'not_started' ? 'not started' : 'not yet';
    return { ...row, note };
  }
  const stepEnd = ms(step.finished_at) ?? axis.end;
  const segments = nodeSegments(marks, step, stepEnd).map((s) => ({
    ...s,
    from: Math.max(axis.origin, s.from),
    to: Math.min(axis.end, Math.max(s.to, s.from)),
  }));
  const first = segments[0]?.from;
  if (first === undefined) return { ...row, note: 'not yet' };
  row.took = Math.max(0, (segments.at(-1)?.to ?? first) - first);
  if (ready !== null && first - ready >= QUEUED_MIN_SHARE * (axis.end - axis.origin))
    segments.unshift({ kind: 'queued', from: ready, to: first });
  return { ...row, segments };
}

/** The run's own row: queued until a worker took it, then running, waiting while an approval waited. */
function runRow(run: RunDetail, axis: { origin: number; end: number }, waits: readonly Segment[]): TimelineRow {
  const started = ms(run.started_at);
  const finished = ms(run.finished_at) ?? axis.end;
  const segments: Segment[] = [{ kind: 'queued', from: axis.origin, to: started ?? finished }];
  let at = started;
  for (const wait of [...waits].sort((a, b) => a.from - b.from)) {
    if (at === null || wait.to <= at) continue;
    if (wait.from > at) segments.push({ kind: 'running', from: at, to: wait.from });
    segments.push({ kind: 'waiting', from: Math.max(at, wait.from), to: wait.to });
    at = wait.to;
  }
  if (at !== null && finished > at) segments.push({ kind: 'running', from: at, to: finished });
  const took = started === null ? null : finished - started;
  return { id: run.id, type: 'run', status: run.status, segments: segments.filter((s) => s.to > s.from), took };
}

/** The timeline of a run: `now` is where the axis ends while the run goes on. */
export function runTimeline(run: RunDetail, graph: GraphSnapshot, marks: readonly RunMark[], now: number): Timeline {
  const origin = Date.parse(run.created_at);
  const end = Math.max(origin, ms(run.finished_at) ?? now);
  const axis = { origin, end };
  const steps = new Map(run.logs.map((s) => [s.node_id, s]));
  const marksOf = new Map<string, RunMark[]>();
  for (const mark of marks) {
    const id = mark.data.node_id;
    if (typeof id === 'string') (marksOf.get(id) ?? marksOf.set(id, []).get(id)!).push(mark);
  }
  const runStart = ms(run.started_at);
  const rows = graph.nodes.map((node) => {
    // Ready when the last of its inputs finished (a start node: when the run started).
    const inputs = graph.edges.filter((e) => e.to === node.id).map((e) => ms(steps.get(e.from)?.finished_at));
    const ready = runStart === null ? null : Math.max(runStart, ...inputs.filter((t): t is number => t !== null));
    return nodeRow(node, steps.get(node.id), marksOf.get(node.id) ?? [], ready, axis, run);
  });
  const waits = rows.flatMap((r) => r.segments.filter((s) => s.kind === 'waiting'));
  const timed = rows.filter((r) => r.took !== null && r.took > 0); // none when every node took no time
  const slowest = timed.reduce<TimelineRow | undefined>((a, r) => (a && a.took! >= r.took! ? a : r), undefined);
  return { origin, end, run: runRow(run, axis, waits), rows, ...(slowest ? { slowest: slowest.id } : {}) };
}
