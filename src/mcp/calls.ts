// `tools/call`: a run of the tool's workflow, started as the API starts one (runs/service.ts
// startRun: the same input check, per-minute and concurrent quotas, monthly budget and
// Idempotency-Key replay), followed through its events to its end. Refusals are the API's
// problems, told to the model as a tool error in the API's words, never a protocol error.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../context.ts';
import { Problem, runsNotConfigured } from '../shared/errors.ts';
import { cancelRun, getRun, startRun, type RunDetail, type RunStarts } from '../runs/service.ts';
import { isTerminal } from '../runs/service.ts';
import type { StoredRunEvent } from '../runs/events.ts';

export interface ToolCall {
  userId: number;
  workflowId: string;
  args: Record<string, unknown>;
  idempotencyKey: string | undefined;
  /** Tells the client of the run's progress; only when it sent a progressToken. */
  progress: ((progress: number, message: string) => Promise<void>) | undefined;
  /** Aborts when the client cancels the call or goes away: the run is cancelled. */
  signal: AbortSignal;
}

/** Events read at most per read of the run's stream. */
const READ_PAGE = 500;
/** A notice of the run's events may be lost (a reconnect): the run is read again this often. */
const RECHECK_MS = 5000;

/** The events worth a progress notification: a node's start, end, retry or wait, and the run's status. */
const TOLD: ReadonlySet<string> = new Set([
  'run.status',
  'node.started',
  'node.finished',
  'node.retry',
  'node.waiting',
]);

/** The tool's error: what the model reads, in the API's words. */
export const toolError = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

function problemText(problem: Problem): string {
  const items = (problem.errors ?? []).map(
    (item) => `${item.pointer.replace(/^\/body\/inputs\//, '')} ${item.message}`,
  );
  return items.length ? `${problem.message} ${items.join('; ')}.` : problem.message;
}

/** Runs the call's workflow and answers with its output, or a tool error saying why not. */
export async function callTool(ctx: AppContext, runStarts: RunStarts, call: ToolCall): Promise<CallToolResult> {
  // One wait slot of the run endpoints' Prefer: wait (WAITS_PER_USER per process) per call.
  if (!ctx.runs) return toolError(runsNotConfigured().message);
  const release = ctx.runs.waits.tryTake(undefined, call.userId);
  if (!release)
    return toolError(
      `Too many of your tool calls are in progress (at most ${ctx.config.WAITS_PER_USER}); retry once one has ended.`,
    );
  try {
    const { run } = await startRun(ctx, call.userId, call.workflowId, call.args, call.idempotencyKey, runStarts);
    return resultOf(await followToEnd(ctx, call, run.id));
  } catch (err) {
    if (err instanceof Problem) return toolError(problemText(err));
    throw err;
  } finally {
    release();
  }
}

/** A progress notification's words for an event. */
function describe(event: StoredRunEvent): string {
  let data: Record<string, unknown> = {};
  try {
    data = JSON.parse(event.data) as Record<string, unknown>;
  } catch {
    // a stored event is JSON; a malformed one is told by its type alone
  }
  if (event.type === 'run.status') return `run ${String(data.status)}`;
  const node = typeof data.node_id === 'string' ? data.node_id : '?';
  const status = typeof data.status === 'string' ? ` (${data.status})` : '';
  return `${event.type} ${node}${status}`;
}

/**
 * Follows the run's events (the process's shared reader, as the event stream does) until it ends
 * or waits for an approval, telling each to the client; cancels it when the call is aborted.
 */
async function followToEnd(ctx: AppContext, call: ToolCall, runId: string): Promise<RunDetail> {
  const read = () => getRun(ctx, call.userId, call.workflowId, runId);
  let wake = () => {};
  let woken = false;
  const follower = await ctx.runs!.events.follow(runId, () => {
    woken = true;
    wake();
  });
  const onAbort = () => {
    woken = true;
    wake();
  };
  call.signal.addEventListener('abort', onAbort, { once: true });
  try {
    let after = 0;
    for (;;) {
      if (call.signal.aborted) return await cancelled(ctx, call, runId);
      woken = false;
      const events = await follower.read(after, READ_PAGE);
      let ended = false;
      for (const event of events) {
        after = event.seq;
        if (call.progress && TOLD.has(event.type)) await call.progress(event.seq, describe(event));
        ended ||= event.type === 'run.finished' || event.type === 'node.waiting';
      }
      if (events.length === READ_PAGE) continue;
      if (ended || (!woken && (await pause(RECHECK_MS, (w) => (wake = w))))) {
        const run = await read();
        if (isTerminal(run.status) || run.status === 'waiting') return run;
      }
    }
  } finally {
    call.signal.removeEventListener('abort', onAbort);
    follower.stop();
  }
}

/** Waits `ms` or until woken; true when the time ran out (time to read the run itself). */
function pause(ms: number, setWake: (wake: () => void) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    setWake(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

/** Cancels the run (one that ended meanwhile stays as it ended) and reads it. */
async function cancelled(ctx: AppContext, call: ToolCall, runId: string): Promise<RunDetail> {
  await cancelRun(ctx, call.userId, call.workflowId, runId).catch((err: unknown) => {
    if (!(err instanceof Problem)) throw err;
  });
  return getRun(ctx, call.userId, call.workflowId, runId);
}

/** The ended run as the tool's result: its output, structured and as JSON text; else why it has none. */
function resultOf(run: RunDetail): CallToolResult {
  const meta = { _meta: { run_id: run.id, run_status: run.status } };
  if (run.status === 'completed') {
    const output = (run.output ?? {}) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output, ...meta };
  }
  if (run.status === 'waiting')
    return { ...toolError(`The run ${run.id} waits for an approval; it goes on once it is answered.`), ...meta };
  const why = run.error ? `: ${run.error.message}` : '';
  return { ...toolError(`The run ${run.id} ended ${run.status}${why}`), ...meta };
}
