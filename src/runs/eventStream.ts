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

/** A comment line this often keeps proxies and load balancers from closing a quiet stream. */
export const KEEPALIVE_MS = 15_000;
/** Events read per query (a long answer's deltas are many). */
const PAGE = 500;


/** What a stream reads: the store, the queue's notices (ctx.runs; 503 without a queue), the logger. */
export type EventStreamContext = Pick<AppContext, 'db' | 'logger' | 'runs'>;

/**
 * Streams the run's events. `readRun` answers the run as getRun does (and throws getRun's 404 for
 * another user's run) before anything is written, so errors keep their problem+json bodies.
 */
export async function streamRunEvents(
  ctx: EventStreamContext,
  req: Request,
  res: Response,
  runId: string,
  readRun: () => Promise<RunDetail>,
): Promise<void> {
  const queue = ctx.runs?.queue;
  if (!queue) throw runsNotConfigured();
  let after = Number(req.get('Last-Event-ID') ?? 0); // the contract allows digits only
  let notices = 0;
  let wake: () => void = () => {};
  const onNotice = (id: string | null) => {
    if (id === null || id === runId) {
      notices++;
      wake();
    }
  };
  // Listening before the first read: an event stored between the two is not missed.
  const stops = await Promise.all([queue.watchRunEvents(onNotice), queue.watchRunEnded(onNotice)]);
  let keepalive: NodeJS.Timeout | undefined;
  let gone = false;
  const onClose = () => {
    gone = true;
    wake();
  };
  try {
    const run = await readRun();
    startEventStream(res);
    res.flushHeaders();
    res.on('close', onClose);
    // A connection whose client is behind needs no keepalive (and each would wait for its drain).
    keepalive = setInterval(() => res.writableNeedDrain || void writeFrame(res, ': keepalive\n\n'), KEEPALIVE_MS);
    for (;;) {
      const seen = notices;
      let events: StoredRunEvent[];
      try {
        events = await listRunEventsAfter(ctx.db, runId, after, PAGE);
      } catch (err) {
        // The client reconnects with Last-Event-ID and loses nothing.
        ctx.logger.warn({ err, runId }, 'run event stream: read failed; stream ended');
        return;
      }
      for (const event of events) {
        if (gone) return;
        await writeFrame(res, sseFrame(event));
        after = event.seq;
        if (event.type === 'run.finished') return;
      }
      if (gone) return;
      if (events.length === PAGE) continue;
      if (isTerminal(run.status)) {
        // Ended without end events (a run older than the event stream, or one failed when its queue
        // write failed, which a replay may queue again): its end alone, numbered after the stored
        // events. A client at or past the end (its Last-Event-ID is the stored run.finished's, the
        // end given before, or beyond) gets nothing new, not an event made up again (issue 33).
        if (await endNotStored(ctx, runId, after)) {
          const { logs: _logs, ...ended } = run;
          await writeFrame(res, sseFrame({ seq: after + 1, type: 'run.finished', data: JSON.stringify(ended) }));
        }
        return;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (notices !== seen || gone) resolve();
      });
    }
  } finally {
    clearInterval(keepalive);
    res.off('close', onClose);
    for (const stop of stops) stop();
    if (res.headersSent && !res.writableEnded) res.end();
  }
}

/** True when the stream stored so far ends exactly at `after` and without its run.finished: its end is owed. */
async function endNotStored(ctx: EventStreamContext, runId: string, after: number): Promise<boolean> {
  const last = await lastRunEventSeq(ctx.db, runId);
  if (after !== last) return false;
  const [final] = last === 0 ? [] : await listRunEventsAfter(ctx.db, runId, last - 1, 1);
  return final?.type !== 'run.finished';
}
