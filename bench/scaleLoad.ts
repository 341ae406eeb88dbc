// The load of row 10 (runs at scale), in the load generator's process (bench/load.ts, kind 'scale').
// `connections` clients start runs with `Prefer: wait`, client i on API process i % 2, each with one
// run in flight: their runs/s, p50 and p99 are the row. Beside them, `observers` clients (not in the
// row's figures) each start a run on one API process without waiting, open its event stream on the
// OTHER process at once, and read it to `run.finished`: whether a run's events reach a client of a
// process that neither started nor executed it (the run's worker is a third process) is the
// cross-process delivery the row counts.
import http from 'node:http';
import { readServerSentEvents, type ServerSentEvent } from '../client/src/index.ts';
import { percentile, sender } from './httpClient.ts';
import type { LoadResult, LoadSpec } from './types.ts';

type ScaleSpec = Extract<LoadSpec, { kind: 'scale' }>;

interface ScaleResult {
  runs: number;
  rps: number;
  p50: number;
  p99: number;
  /** Runs of the waiting clients that did not end `completed` (or an answer other than 200/202). */
  errors: number;
  seconds: number;
  observed: {
    /** Runs started on one process whose stream was opened on the other. */
    runs: number;
    /** Those whose stream on the other process carried events 1..n without a gap and ended with run.finished (completed). */
    reached: number;
    /** Of `reached`, those whose stream was asked for before the run's finished_at (while it ran or was queued). */
    live: number;
    /** What went wrong with the others, a few examples. */
    problems: string[];
  };
}

const STREAM_TIMEOUT_MS = 30_000;

/** A run's event stream read to its end (or STREAM_TIMEOUT_MS): its events, and when it was asked for. */
async function readStream(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; openedAt: number; events: ServerSentEvent[] }> {
  const signal = AbortSignal.timeout(STREAM_TIMEOUT_MS);
  const openedAt = Date.now();
  const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal });
  const events: ServerSentEvent[] = [];
  if (res.status !== 200 || !res.body) return { status: res.status, openedAt, events };
  for await (const event of readServerSentEvents(res.body, signal)) events.push(event);
  return { status: res.status, openedAt, events };
}

type Observation = { reached: boolean; live: boolean; problem?: string };

/** Whether a stream carried its run's events 1..n, in order, ending with run.finished of a completed run. */
export function judgeStream(events: ServerSentEvent[], openedAt: number): Observation {
  const gap = events.findIndex((e, i) => e.id !== String(i + 1));
  if (gap >= 0) return { reached: false, live: false, problem: `event ${gap + 1} had id ${events[gap]!.id}` };
  const last = events.at(-1);
  if (last?.event !== 'run.finished')
    return {
      reached: false,
      live: false,
      problem: `the stream ended after ${events.length} events without run.finished`,
    };
  const run = JSON.parse(last.data) as { status: string; finished_at: string | null };
  if (run.status !== 'completed') return { reached: false, live: false, problem: `the run ended ${run.status}` };
  return { reached: true, live: run.finished_at !== null && openedAt < Date.parse(run.finished_at) };
}

async function measure(spec: ScaleSpec): Promise<ScaleResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections + spec.observers });
  const send = sender(agent);
  const auth = { authorization: `Bearer ${spec.apiKey}` };
  const json = { ...auth, 'content-type': 'application/json', accept: 'application/json' };
  const waiting = { ...json, prefer: `wait=${spec.waitSeconds}` };
  const body = JSON.stringify({ inputs: spec.inputs });
  const runsPath = `/api/workflows/${spec.workflowId}/runs`;
  const latencies: number[] = [];
  const observed: ScaleResult['observed'] = { runs: 0, reached: 0, live: 0, problems: [] };
  let errors = 0;
  const start = performance.now();
  const end = start + spec.durationSeconds * 1000;

  const waiter = async (i: number) => {
    const api = spec.apis[i % 2]!;
    while (performance.now() < end) {
      const t0 = performance.now();
      let status: string | undefined;
      try {
        let reply = await send(api, 'POST', `/api/workflows/${spec.workflowId}/run`, waiting, body);
        let run =
          reply.status === 200 || reply.status === 202
            ? (JSON.parse(reply.body) as { data: { id: string; status: string } }).data
            : undefined;
        while (run && (run.status === 'queued' || run.status === 'running')) {
          reply = await send(api, 'GET', `${runsPath}/${run.id}`, waiting);
          run =
            reply.status === 200
              ? (JSON.parse(reply.body) as { data: { id: string; status: string } }).data
              : undefined;
        }
        status = run?.status;
      } catch {
        status = undefined;
      }
      latencies.push(performance.now() - t0);
      if (status !== 'completed') errors += 1;
    }
  };

  const observer = async (j: number) => {
    const [here, there] = j % 2 === 0 ? spec.apis : [spec.apis[1], spec.apis[0]];
    while (performance.now() < end) {
      let result: Observation;
      try {
        const started = await send(here, 'POST', `/api/workflows/${spec.workflowId}/run`, json, body);
        if (started.status !== 202) throw new Error(`POST .../run answered ${started.status}`);
        const { id } = (JSON.parse(started.body) as { data: { id: string } }).data;
        const stream = await readStream(`${there}${runsPath}/${id}/events`, auth);
        result =
          stream.status === 200
            ? judgeStream(stream.events, stream.openedAt)
            : { reached: false, live: false, problem: `the stream answered ${stream.status}` };
      } catch (err) {
        result = { reached: false, live: false, problem: (err as Error).message };
      }
      observed.runs += 1;
      if (result.reached) observed.reached += 1;
      if (result.live) observed.live += 1;
      if (result.problem && observed.problems.length < 3) observed.problems.push(result.problem);
    }
  };

  await Promise.all([
    ...Array.from({ length: spec.connections }, (_, i) => waiter(i)),
    ...Array.from({ length: spec.observers }, (_, j) => observer(j)),
  ]);
  const seconds = (performance.now() - start) / 1000;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    runs: sorted.length,
    rps: sorted.length / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors,
    seconds,
    observed,
  };
}

/** The row: the waiting clients' runs/s, p50 and p99; the cross-process count in its note. */
export async function scale(spec: ScaleSpec): Promise<LoadResult> {
  const r = await measure(spec);
  const o = r.observed;
  const problems = o.problems.length ? `; e.g. ${o.problems.join('; ')}` : '';
  return {
    requests: r.runs,
    rps: r.rps,
    p50: r.p50,
    p99: r.p99,
    errors: r.errors,
    seconds: r.seconds,
    note: `${o.reached} of ${o.runs} runs started on one API process had all their events, through run.finished, on a stream of the other (${o.live} of them asked for before the run ended; ${spec.observers} observer clients beside the ${spec.connections} measured)${problems}`,
  };
}
