// GET /api/workflows/{workflow_id}/runs/{run_id}/events (openapi.yaml streamRunEvents): the run's
// stored events (events.ts) as Server-Sent Events. Replays what is stored after Last-Event-ID,
// then waits for the NOTIFY of new events or of the run's end (queue.ts), never a poll loop, and
// ends after run.finished. A client that leaves frees its listeners and timers at once.
import type { Request, Response } from 'express';
import type { AppContext } from '../context.ts';
import { runsNotConfigured } from '../shared/errors.ts';
import { startEventStream, writeFrame } from '../shared/sseStream.ts';
import { lastRunEventSeq, listRunEventsAfter, sseFrame, type StoredRunEvent } from './events.ts';
import { isTerminal } from './store.ts';
import type { RunDetail } from './service.ts';
import type { RunFollower } from './sharedEvents.ts';

/** A comment line this often keeps proxies and load balancers from closing a quiet stream. */
export const KEEPALIVE_MS = 15_000;
/** Events read per query (a long answer's deltas are many). */
const PAGE = 500;
/**
 * What a stream whose API process stops writes before it ends: reconnect in a second (an
 * EventSource does, with Last-Event-ID, and another process continues the stream).
 */
export const RECONNECT_FRAME = 'retry: 1000\n: reconnect\n\n';

/** What a stream reads: the store, the queue's notices (ctx.runs; 503 without a queue), the logger. */
export type EventStreamContext = Pick<AppContext, 'db' | 'logger' | 'runs'>;

/**
 * Streams the run's events. `readRun` answers the run as getRun does (and throws getRun's 404 for
 * another user's run) before anything is written, so errors keep their problem+json bodies.
 * `caller` (its API key, none for the console's session) takes one of its slots (streamSlots.ts:
 * 429 past its bounds) for as long as it streams.
 */
export async function streamRunEvents(
  ctx: EventStreamContext,
  req: Request,
  res: Response,
  runId: string,
  readRun: () => Promise<RunDetail>,
  caller: { keyId?: number; userId: number },
): Promise<void> {
  const runs = ctx.runs;
  if (!runs) throw runsNotConfigured();
  let after = Number(req.get('Last-Event-ID') ?? 0); // the contract allows digits only
  let notices = 0;
  let wake: () => void = () => {};
  let keepalive: NodeJS.Timeout | undefined;
  let gone = false;
  let stopping = false; // the process stops: the client reconnects elsewhere
  const onClose = () => {
    gone = true;
    wake();
  };
  const release = runs.streams.take(caller.keyId, caller.userId, () => {
    stopping = true;
    wake();
  });
  let follower: RunFollower | undefined;
  try {
    // Listening before the first read: an event stored between the two is not missed.
    follower = await runs.events.follow(runId, () => {
      notices++;
      wake();
    });
    const run = await readRun();
    keepalive = openStream(res, onClose);
    for (;;) {
      if (stopping) {
        await writeFrame(res, RECONNECT_FRAME);
        return;
      }
      const seen = notices;
      let events: StoredRunEvent[];
      try {
        events = await follower.read(after, PAGE);
      } catch (err) {
        // The client reconnects with Last-Event-ID and loses nothing.
        ctx.logger.warn({ err, runId }, 'run event stream: read failed; stream ended');
        return;
      }
      for (const event of events) {
        if (gone) return;
        if (stopping) break;
        await writeFrame(res, sseFrame(event));
        after = event.seq;
        if (event.type === 'run.finished') return;
      }
      if (gone) return;
      if (events.length === PAGE || stopping) continue;
      if (isTerminal(run.status)) {
        // Ended without end events (a run older than the event stream, or one failed when its queue
        // write failed, which a replay may queue again): its end alone, numbered after the stored
        // events. A client at or past the end (its Last-Event-ID is the stored run.finished's, the
        // end given before, or beyond) gets nothing new, not an event made up again.
        if (await endNotStored(ctx, runId, after)) {
          const { logs: _logs, ...ended } = run;
          await writeFrame(res, sseFrame({ seq: after + 1, type: 'run.finished', data: JSON.stringify(ended) }));
        }
        return;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (notices !== seen || gone || stopping) resolve();
      });
    }
  } finally {
    clearInterval(keepalive);
    res.off('close', onClose);
    follower?.stop();
    release();
    if (res.headersSent && !res.writableEnded) res.end();
  }
}

/** Sends the stream's headers and keeps it alive until it ends (clear the timer returned); `onClose`: the client left. */
function openStream(res: Response, onClose: () => void): NodeJS.Timeout {
  startEventStream(res);
  res.flushHeaders();
  res.on('close', onClose);
  // A connection whose client is behind needs no keepalive (and each would wait for its drain).
  return setInterval(() => res.writableNeedDrain || void writeFrame(res, ': keepalive\n\n'), KEEPALIVE_MS);
}

/** True when the stream stored so far ends exactly at `after` and without its run.finished: its end is owed. */
async function endNotStored(ctx: EventStreamContext, runId: string, after: number): Promise<boolean> {
  const last = await lastRunEventSeq(ctx.db, runId);
  if (after !== last) return false;
  const [final] = last === 0 ? [] : await listRunEventsAfter(ctx.db, runId, last - 1, 1);
  return final?.type !== 'run.finished';
}
