// A run's end and its events, without polling: `Prefer: wait` (RFC 7240) on getRun, and the
// run's Server-Sent Events with `Last-Event-ID` resumption.
import type { ApiClient, Schemas } from './types.ts';
import { StreamError, type Result } from './result.ts';
import { readServerSentEvents } from './sse.ts';

type RunStep = Schemas['RunStep'];
/** The events of `streamRunEvents` this client knows (the contract's list is open: others are skipped). */
export type RunEvent =
  | { id: string; event: 'run.status'; data: { status: Schemas['RunStatus'] } }
  | { id: string; event: 'node.started'; data: Pick<RunStep, 'node_id' | 'node_type' | 'started_at'> }
  | { id: string; event: 'node.delta'; data: { node_id: string; text: string } }
  | {
      id: string;
      event: 'node.finished';
      data: Pick<RunStep, 'node_id' | 'node_type' | 'status' | 'finished_at' | 'output' | 'usage' | 'error'>;
    }
  | { id: string; event: 'run.finished'; data: Schemas['Run'] };
const KNOWN = new Set<string>(['run.status', 'node.started', 'node.delta', 'node.finished', 'run.finished']);

interface RunRef {
  workflowId: string;
  runId: string;
}

/**
 * Reads the run until it has ended, each read waiting up to 60 s on the server (`Prefer: wait=60`);
 * after `timeoutSeconds` (default 300) the run as it is then. Ended means `finished_at` is set, so
 * a status this client does not know yet (the enum is open) counts as not ended.
 */
export async function waitForRun(
  api: ApiClient,
  { workflowId, runId }: RunRef,
  options: { timeoutSeconds?: number; signal?: AbortSignal } = {},
): Promise<Result<Schemas['RunDetail'], Schemas['Problem']>> {
  const deadline = Date.now() + (options.timeoutSeconds ?? 300) * 1000;
  for (;;) {
    const wait = Math.max(0, Math.min(60, Math.ceil((deadline - Date.now()) / 1000)));
    const { data, error, response } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: runId }, header: { Prefer: `wait=${wait}` } },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (error !== undefined) return { error: error as Schemas['Problem'], response };
    if (data.data.finished_at !== null || wait === 0) return { data: data.data, response };
  }
}

/**
 * The run's events, oldest first, until `run.finished`. A dropped connection is resumed with
 * `Last-Event-ID` (no event lost or repeated); `lastEventId` starts after an event already seen.
 * A refusal of the first request is the `error`; one on a reconnection throws a `StreamError`.
 */
export async function followRunEvents(
  api: ApiClient,
  run: RunRef,
  options: { lastEventId?: string; signal?: AbortSignal; maxReconnects?: number } = {},
): Promise<Result<AsyncIterable<RunEvent>, Schemas['Problem']>> {
  const first = await openEvents(api, run, options.lastEventId, options.signal);
  if (first.error !== undefined) return first;
  return { data: events(api, run, first.data, options), response: first.response };
}

async function openEvents(
  api: ApiClient,
  { workflowId, runId }: RunRef,
  lastEventId: string | undefined,
  signal: AbortSignal | undefined,
) {
  const { data, error, response } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}/events', {
    params: {
      path: { workflow_id: workflowId, run_id: runId },
      ...(lastEventId ? { header: { 'Last-Event-ID': lastEventId } } : {}),
    },
    parseAs: 'stream',
    headers: { Accept: 'text/event-stream' },
    ...(signal ? { signal } : {}),
  });
  if (error !== undefined) return { error: error as Schemas['Problem'], response };
  return { data: data as unknown as ReadableStream<Uint8Array>, response };
}

async function* events(
  api: ApiClient,
  run: RunRef,
  first: ReadableStream<Uint8Array>,
  options: { lastEventId?: string; signal?: AbortSignal; maxReconnects?: number },
): AsyncGenerator<RunEvent> {
  let body: ReadableStream<Uint8Array> | undefined = first;
  let lastId = options.lastEventId;
  let reconnects = 0;
  for (;;) {
    try {
      for await (const event of body ? readServerSentEvents(body, options.signal) : []) {
        lastId = event.id || lastId;
        reconnects = 0;
        if (!KNOWN.has(event.event)) continue;
        const known = { id: event.id, event: event.event, data: JSON.parse(event.data) } as RunEvent;
        yield known;
        if (known.event === 'run.finished') return;
      }
    } catch (err) {
      if (options.signal?.aborted) throw err;
    }
    if (options.signal?.aborted) return;
    if (++reconnects > (options.maxReconnects ?? 5))
      throw new StreamError(`The run's event stream broke ${reconnects - 1} times in a row.`);
    // Wait a little longer each time, as EventSource's reconnection time does (0.25 s, doubled).
    await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (reconnects - 1)));
    // A network error while reconnecting is one more broken attempt; a refusal ends the stream.
    const again = await openEvents(api, run, lastId, options.signal).catch(() => undefined);
    if (again?.error !== undefined)
      throw new StreamError(`Reconnecting to the run's events answered ${again.response.status}.`, again.error);
    body = again?.data;
  }
}
