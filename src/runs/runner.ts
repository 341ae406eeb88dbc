// The worker side of a run: one pg-boss job = one attempt at one run. It claims the run with a
// conditional update, executes the graph snapshot writing per-node logs, and ends the run with a
// conditional update that only its own attempt can make (the `attempts` column is the fence).
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { AppContext } from '../context.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { executeGraph, RunFailure, type StepReport, type WorkflowNode } from './executor.ts';
import type { ModelRouter } from './providers/index.ts';
import { STORE_UNAVAILABLE, type DeliveryFailure, type RunJobContext, type RunQueue } from './queue.ts';
import type { NewRunEvent } from './events.ts';
import { runsStore } from './runsStore.ts';
import { runEndEvents, toRun, toRunStep, type GraphSnapshot, type RunDetail } from './service.ts';
import * as store from './store.ts';
import { observeRunFinished } from '../ops/metrics.ts';
import type { EndingAttempt, FinalEvents, RunRow, RunStepRow } from './store.ts';

/** A step's input and output are logged whole up to this many characters (openapi.yaml RunStep). */
export const LOG_TEXT_MAX = 200_000;
/** How often a worker reads the state of the runs it executes, to notice another process's cancel. */
const STATUS_POLL_MS = 1000;
/**
 * The check between nodes trusts an ownership confirmed this recently (by the claim, the status
 * poll or an earlier check) instead of asking the store again: well inside the status poll's
 * second, and a fast graph costs no query per node.
 */
const OWNERSHIP_FRESH_MS = 250;
/**
 * A node still running after this long has its start written at once (a client polling the run
 * sees it `running`); steps that end sooner are written once, start and end together, in one
 * insert with the others (at the latest just before the run is finished).
 */
export const STEP_LOG_DELAY_MS = 50;

/** What a worker reads: the store, RUN_TIMEOUT_SECONDS, the logger, the clock. */
export type RunnerContext = Pick<AppContext, 'db' | 'config' | 'logger' | 'now'>;

/** Where a worker tells of the runs it ended (`Prefer: wait`) and of the events it stored (event streams): NOTIFY. */
export type RunAnnouncer = Pick<RunQueue, 'announceRunEnded' | 'announceRunEvents'>;

/** `announce` made one that never throws: a failed NOTIFY is logged. */
function quietly(ctx: RunnerContext, what: string, announce: (runId: string) => Promise<void>): (runId: string) => void {
  return (runId) => void announce(runId).catch((err: unknown) => ctx.logger.warn({ err, runId }, `${what} NOTIFY failed`));
}

/**
 * How long one attempt keeps retrying a store call that cannot reach the database (backoff from
 * 100 ms to 5 s) before it gives the job back to the queue, which retries it later (queue.ts).
 * Execution goes on meanwhile: a model call does not need the store.
 */
export const STORE_OUTAGE_BUDGET_MS = 60_000;

/** The store stayed unreachable through an attempt's budget; pg-boss keeps `code` as the job's output. */
export class StoreUnavailable extends Error {
  readonly code = STORE_UNAVAILABLE;
  constructor(cause: unknown) {
    super(`The store could not be reached: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'StoreUnavailable';
  }
}

/** `fn`, retried with backoff while the database is unreachable, for at most `budgetMs`. */
export async function withStore<T>(fn: () => Promise<T>, budgetMs: number, logger?: Logger): Promise<T> {
  const deadline = performance.now() + budgetMs;
  let delay = 100;
  for (let tries = 1; ; tries++) {
    try {
      return await fn();
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      if (performance.now() + delay > deadline) throw new StoreUnavailable(err);
      if (tries === 1) logger?.warn({ err }, 'store unreachable; a run step is retried with backoff');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }
}

export interface Runner {
  /** The pg-boss job handler. Throws only when the attempt was interrupted, so pg-boss retries it. */
  handle(runId: string, job: RunJobContext): Promise<void>;
  /** Stops this process's execution of a cancelled run at once (in-flight provider calls included). */
  abortLocal(runId: string): void;
  /**
   * The run this process is about to enqueue, as stored: if this process's worker gets its job,
   * it claims the run without reading it back (graph and inputs never change after the insert).
   */
  expect(run: RunRow): void;
  /**
   * A run this process's worker ended a moment ago, as the store now has it (run and log), for a
   * `Prefer: wait` request of this process woken by that end: it answers without reading it back.
   * Undefined when not ended here recently (or too large to keep): read the store.
   */
  endedHere(runId: string): EndedRun | undefined;
}

/** A run as its worker ended it: its owner and workflow (the reader checks them), and its wire shape. */
export interface EndedRun {
  userId: number;
  workflowId: string;
  detail: RunDetail;
}

/** Runs handed over by `expect`, at most this many (the rest are read from the store). */
const HANDOVER_MAX_RUNS = 256;
/** The largest run (characters of its graph, inputs, output and logs) kept in memory, handed over or ended here. */
const KEPT_RUN_MAX_CHARS = 64 * 1024;
/** Runs kept by `endedHere`: a waiter reads its run right after the end's notice, so the last few suffice. */
const ENDED_HERE_MAX_RUNS = 64;

/** The text as logged: whole, or cut at LOG_TEXT_MAX characters (never inside a surrogate pair). */
export function logText(text: string | null): { text: string | null; cut: boolean } {
  if (text === null || text.length <= LOG_TEXT_MAX) return { text, cut: false };
  const end = /[\uD800-\uDBFF]/.test(text[LOG_TEXT_MAX - 1]!) ? LOG_TEXT_MAX - 1 : LOG_TEXT_MAX;
  return { text: text.slice(0, end), cut: true };
}

/** The error of a run given up without a live attempt, by the true cause of its last failed delivery. */
export function abandonedRunError(cause: DeliveryFailure, deliveries?: number): string {
  const message =
    cause === 'store_unavailable'
      ? 'The database stayed unreachable through every retry of this run; it was given up.'
      : deliveries
        ? `The worker running this run stopped responding ${deliveries} times; the run was not retried again.`
        : 'The worker running this run stopped and the run was not retried.';
  return JSON.stringify(new RunFailure(cause, message));
}

/** The job was taken away from this worker (pg-boss expiry or shutdown): not the run's fault. */
class Interrupted extends Error {}

type NewStep = Omit<RunStepRow, 'id'>;
type StepEnd = Pick<RunStepRow, 'status' | 'finished_at' | 'output_preview' | 'truncated' | 'usage' | 'error'>;

/**
 * One run's per-node log, written behind execution: a step that starts and ends within
 * STEP_LOG_DELAY_MS is inserted once, already ended, together with the others; a slower one is
 * inserted as `running` when the delay passes and updated when it ends. Inserts keep start order,
 * so the log reads in execution order. `close()` waits for the writes under way and reports a
 * failed one; what is left, `rest()`, goes in the transaction that ends the run. Nothing is
 * written unless `mine()` says the attempt holds the run (it claims the run if need be).
 */
class StepLog {
  private readonly pending: NewStep[] = [];
  /** Every step of the attempt, as written (or about to be): the log as the store has it after close(). */
  private readonly all: NewStep[] = [];
  private writes: Promise<void> = Promise.resolve();
  private failure: unknown;
  private timer: NodeJS.Timeout | undefined;

  private readonly db: Knex;
  private readonly runId: string;
  private readonly retry: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly mine: () => Promise<boolean>;

  constructor(db: Knex, runId: string, retry: <T>(fn: () => Promise<T>) => Promise<T>, mine: () => Promise<boolean>) {
    this.db = db;
    this.runId = runId;
    this.retry = retry;
    this.mine = mine;
  }

  start(row: NewStep): void {
    this.pending.push(row);
    this.all.push(row);
    if (!this.timer) this.timer = setTimeout(() => this.flush(), STEP_LOG_DELAY_MS);
  }

  end(nodeId: string, end: StepEnd): void {
    const row = this.all.find((r) => r.node_id === nodeId && r.status === 'running');
    const unwritten = row !== undefined && this.pending.includes(row);
    if (row) Object.assign(row, end);
    if (!unwritten) this.enqueue(() => runsStore(this.db).endStep(this.runId, nodeId, end));
  }

  /** The log in execution order, as the store has it once the run's end (with `rest()`) is written. */
  written(): readonly NewStep[] {
    return this.all;
  }

  /** Resolves when the writes under way are done, rejects if one failed. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writes;
    if (this.failure !== undefined) throw this.failure;
  }

  /** After close(): the steps not yet written, to be written with the run's end. */
  rest(): NewStep[] {
    return this.pending.splice(0).map((r) => ({ ...r }));
  }

  /** The attempt was taken away: nothing more is written. */
  discard(): void {
    clearTimeout(this.timer);
    this.pending.length = 0;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending.length) return;
    const rows = this.pending.splice(0).map((r) => ({ ...r }));
    this.enqueue(() => runsStore(this.db).appendSteps(rows));
  }

  private enqueue(write: () => Promise<void>): void {
    this.writes = this.writes.then(async () => {
      if (this.failure !== undefined) return;
      try {
        if (await this.mine()) await this.retry(write);
      } catch (err) {
        this.failure = err;
      }
    });
  }
}

/**
 * One run's event stream (events.ts), written behind execution in order, as the step log is: the
 * first event waits STEP_LOG_DELAY_MS for others, so a run that ends sooner writes its whole
 * stream once, in the transaction that ends it (`rest()`); a slower one writes what came, then
 * whatever came during each write in the next (an llm_call's deltas pile up into one insert), and
 * each write is announced so the run's streams read it at once. The worker numbers the events
 * itself (no locking read; a number taken by another writer makes it read the last one again).
 * `close()` waits for the write in flight and reports a failed one.
 */
class EventLog {
  private readonly pending: NewRunEvent[] = [];
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failure: unknown;
  private discarded = false;
  /** The number of the last event written, or undefined when not known (a retry, or a failed write). */
  private last: number | undefined;

  private readonly ctx: RunnerContext;
  private readonly runId: string;
  private readonly retry: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly mine: () => Promise<boolean>;
  private readonly announceEvents: (runId: string) => void;

  constructor(
    ctx: RunnerContext,
    runId: string,
    retry: <T>(fn: () => Promise<T>) => Promise<T>,
    mine: () => Promise<boolean>,
    announceEvents: (runId: string) => void,
    last: number | undefined,
  ) {
    this.ctx = ctx;
    this.runId = runId;
    this.retry = retry;
    this.mine = mine;
    this.announceEvents = announceEvents;
    this.last = last;
  }

  add(type: NewRunEvent['type'], data: unknown): void {
    if (this.discarded || this.failure !== undefined) return;
    this.pending.push({ type, data });
    if (!this.writing && !this.timer) this.timer = setTimeout(() => this.flush(), STEP_LOG_DELAY_MS);
  }

  /** Waits for the write in flight; afterwards, the events not yet written are `rest()`. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    if (this.failure !== undefined) throw this.failure;
  }

  /** After close(): the events not yet written, to be written with the run's end, and the last number written. */
  rest(): FinalEvents {
    return { events: this.pending.splice(0), after: this.last };
  }

  /** The attempt was taken away: nothing more is written. */
  discard(): void {
    this.discarded = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.length = 0;
  }

  private flush(): void {
    this.timer = undefined;
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    try {
      if (!(await this.mine())) return; // the attempt does not hold the run: its events are not the run's
      while (this.pending.length && !this.discarded) {
        const batch = this.pending.splice(0);
        const after = this.last;
        this.last = undefined; // unknown until this write is done
        this.last = await this.retry(() => runsStore(this.ctx.db).appendEvents(this.runId, after, batch, this.ctx.now()));
        this.announceEvents(this.runId);
      }
    } catch (err) {
      this.failure = err;
      this.pending.length = 0;
    } finally {
      this.writing = undefined;
    }
  }
}

interface Executing {
  attempt: number;
  controller: AbortController;
  /** performance.now() when the store last said this attempt still holds the run. */
  confirmedAt: number;
}

/**
 * The run as an attempt holds it (`attempts` is the attempt's number), and whether the store says
 * so yet: a queued run is executed before it is claimed, and claimed only if it is still running
 * after STEP_LOG_DELAY_MS or has something to write before its end. A run that ends sooner goes
 * from `queued` to its end in one update (store.ts finishRun), so it costs no claim: like its
 * steps, a client sees it queued until then.
 */
interface Held {
  run: RunRow;
  claimed: boolean;
}

/** A worker's runner; `announcer` (the queue) tells other processes of its runs' ends and events. */
export function createRunner(ctx: RunnerContext, models: ModelRouter, announcer?: RunAnnouncer): Runner {
  const now = () => ctx.now();
  const announceEnded = announcer ? quietly(ctx, 'run end', (id) => announcer.announceRunEnded(id)) : () => {};
  const announceEvents = announcer ? quietly(ctx, 'run events', (id) => announcer.announceRunEvents(id)) : () => {};
  /** A store call of an attempt: an outage shorter than the budget only delays it. */
  const stored = <T>(fn: () => Promise<T>) => withStore(fn, STORE_OUTAGE_BUDGET_MS, ctx.logger);
  const executing = new Map<string, Executing>();
  const handedOver = new Map<string, RunRow>();
  const endedHere = new Map<string, EndedRun>();
  /** Keeps the run this worker just ended, with its whole log, unless it is large. */
  const rememberEnded = (ended: RunRow, steps: readonly NewStep[]) => {
    const size = ended.graph.length + ended.inputs.length + (ended.output?.length ?? 0) + steps.reduce((n, s) => n + (s.input_preview?.length ?? 0) + (s.output_preview?.length ?? 0), 0);
    if (size > KEPT_RUN_MAX_CHARS) return;
    const detail = { ...toRun(ended), logs: steps.map((step) => toRunStep({ id: 0, ...step })) };
    endedHere.set(ended.id, { userId: ended.user_id, workflowId: ended.workflow_id, detail });
    if (endedHere.size > ENDED_HERE_MAX_RUNS) endedHere.delete(endedHere.keys().next().value!);
  };

  // One status poll for all the runs this process executes: a cancel made by another process is
  // seen within a second, for a node waiting on a provider too, at one query a second.
  let poll: NodeJS.Timeout | undefined;
  let polling = false;
  const pollStates = async () => {
    if (polling || !executing.size) return;
    polling = true;
    try {
      const ids = [...executing.keys()];
      const states = await store.runStatesOf(ctx.db, ids);
      const at = performance.now();
      for (const id of ids) {
        const run = executing.get(id);
        if (!run) continue;
        const state = states.get(id);
        if (state?.status === 'running' && state.attempts === run.attempt) run.confirmedAt = at;
        else if (state?.status === 'queued' && state.attempts === run.attempt - 1) continue; // not claimed yet (Held)
        else run.controller.abort(new RunFailure('cancelled', 'The run was cancelled.'));
      }
    } catch (err) {
      ctx.logger.warn({ err }, 'run status poll failed');
    } finally {
      polling = false;
    }
  };
  const watch = (runId: string, run: Executing) => {
    executing.set(runId, run);
    if (!poll) {
      poll = setInterval(() => void pollStates(), STATUS_POLL_MS);
      poll.unref();
    }
  };
  const unwatch = (runId: string) => {
    executing.delete(runId);
    if (!executing.size) {
      clearInterval(poll);
      poll = undefined;
    }
  };

  /** The run as this job's attempt will hold it, claimed or not yet (Held), or null to ack and stop. */
  async function claim(runId: string, job: RunJobContext): Promise<Held | null> {
    const known = handedOver.get(runId);
    handedOver.delete(runId);
    // A first delivery of a run this process just queued: as stored (graph and inputs never change).
    const run = known && job.retryCount === 0 ? known : await stored(() => store.findRun(ctx.db, runId));
    if (!run) {
      ctx.logger.warn({ runId }, 'job for an unknown run; dropped');
      return null;
    }
    if (store.TERMINAL.includes(run.status)) return null; // e.g. cancelled while queued
    if (run.status === 'queued') {
      // Not claimed yet (Held): the first write or the end's update fences on `queued` and this attempt.
      return { run: { ...run, status: 'running', started_at: now(), attempts: run.attempts + 1 }, claimed: false };
    }
    // `running`: a first delivery finding it so is a duplicate of a live job; leave it to that one.
    if (job.retryCount === 0) return null;
    // A retry: the previous attempt's worker died (missed heartbeats), or its store was unreachable.
    // The store answers now, so a store outage is simply retried, on the last delivery too.
    if (job.lastAttempt && job.previousFailure !== 'store_unavailable') {
      if (await stored(() => runsStore(ctx.db).failUnfinished(runId, abandonedRunError('worker_lost', job.retryCount + 1), now(), runEndEvents))) announceEnded(runId);
      ctx.logger.error({ runId, retryCount: job.retryCount }, 'run failed: worker lost on the last attempt');
      return null;
    }
    const startedAt = now();
    // Re-run from scratch: the graph is executed again whole, its log cleared.
    if (!(await stored(() => runsStore(ctx.db).takeOver(runId, run.attempts, startedAt)))) return claim(runId, job);
    ctx.logger.warn({ runId, retryCount: job.retryCount, previousFailure: job.previousFailure }, 'run taken over after its previous attempt failed');
    return { run: { ...run, started_at: startedAt, attempts: run.attempts + 1 }, claimed: true };
  }

  /**
   * queued -> running for the attempt `run` (as Held has it), retried through a store outage. An
   * update that committed but whose answer was lost reads back as `running` with our attempt and
   * start time: that claim is ours.
   */
  async function claimQueued(run: RunRow): Promise<boolean> {
    const startedAt = run.started_at!;
    return stored(async () => {
      if (await runsStore(ctx.db).claim(run.id, run.attempts - 1, startedAt)) return true;
      const current = await store.findRun(ctx.db, run.id);
      return current?.status === 'running' && current.attempts === run.attempts && current.started_at === startedAt;
    });
  }

  async function stillMine(runId: string, attempt: number): Promise<boolean> {
    const current = await stored(() => store.runStatusAndAttempt(ctx.db, runId));
    return current?.status === 'running' && current.attempts === attempt;
  }

  async function execute({ run, claimed }: Held, job: RunJobContext): Promise<void> {
    const runId = run.id;
    const attempt = run.attempts;
    const snapshot = JSON.parse(run.graph) as GraphSnapshot;
    const inputs = JSON.parse(run.inputs) as Record<string, string>;
    const startedAt = run.started_at ?? now();

    const controller = new AbortController();
    const self: Executing = { attempt, controller, confirmedAt: performance.now() };
    watch(runId, self);
    // Not claimed yet (Held): claimed once the run outlives STEP_LOG_DELAY_MS or has a write to make
    // first; if it is no longer queued for this attempt (cancelled meanwhile), execution stops.
    let claiming: Promise<boolean> | undefined = claimed ? Promise.resolve(true) : undefined;
    /** Why the claim could not be made (the store stayed away, or refused it): the job is retried. */
    let claimFailure: unknown;
    const mine = () =>
      (claiming ??= claimQueued(run).then(
        (held) => {
          if (held) self.confirmedAt = performance.now();
          else controller.abort(new RunFailure('cancelled', 'The run was cancelled.'));
          return held;
        },
        (err: unknown) => {
          claimFailure = err;
          controller.abort(err);
          return false;
        },
      ));
    const claimTimer = claimed ? undefined : setTimeout(() => void mine(), STEP_LOG_DELAY_MS);
    // A call out of the process waits for the claim: a run cancelled while queued reaches no provider.
    const heldModels: ModelRouter = {
      ...models,
      async complete(request) {
        if (!models.inProcess(request.model) && !(await mine())) throw controller.signal.reason;
        return models.complete(request);
      },
    };
    const timer = setTimeout(
      () => controller.abort(new RunFailure('timeout', `The run took longer than ${ctx.config.RUN_TIMEOUT_SECONDS} s (RUN_TIMEOUT_SECONDS).`)),
      ctx.config.RUN_TIMEOUT_SECONDS * 1000,
    );
    const onJobAbort = () => controller.abort(new Interrupted('the job was taken away from this worker'));
    job.signal.addEventListener('abort', onJobAbort, { once: true });

    // Another process's cancel: seen between nodes here (the store is asked unless the poll or
    // the claim confirmed the run very recently), and within a second by the status poll.
    const shouldContinue = async () => {
      if (performance.now() - self.confirmedAt < OWNERSHIP_FRESH_MS) return true;
      if (!(await mine())) return false; // a run not claimed yet is claimed first (it is by now anyway)
      try {
        const held = await stillMine(runId, attempt);
        if (held) self.confirmedAt = performance.now();
        return held;
      } catch (err) {
        if (!(err instanceof StoreUnavailable)) throw err;
        controller.abort(err); // the attempt ends, not the run: the job is retried (below)
        return false;
      }
    };
    const steps = new StepLog(ctx.db, runId, stored, mine);
    // A first attempt's stream is empty (a guess: were it not, the first write would collide and read).
    const events = new EventLog(ctx, runId, stored, mine, announceEvents, attempt === 1 ? 0 : undefined);
    events.add('run.status', { status: 'running' });
    const inputCut = new Map<string, boolean>();
    const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    const stepStart = (node: WorkflowNode, input: string) => {
      const logged = logText(input);
      inputCut.set(node.id, logged.cut);
      const stepStartedAt = now();
      events.add('node.started', { node_id: node.id, node_type: node.type, started_at: new Date(stepStartedAt).toISOString() });
      steps.start({
        run_id: runId,
        node_id: node.id,
        node_type: node.type,
        status: 'running',
        started_at: stepStartedAt,
        finished_at: null,
        input_preview: logged.text,
        output_preview: null,
        truncated: logged.cut,
        usage: null,
        error: null,
      });
    };
    const stepEnd = (report: StepReport) => {
      const logged = logText(report.output);
      if (report.usage) {
        usage.prompt_tokens += report.usage.prompt_tokens;
        usage.completion_tokens += report.usage.completion_tokens;
        usage.total_tokens += report.usage.total_tokens;
      }
      const finishedAt = now();
      events.add('node.finished', {
        node_id: report.nodeId,
        node_type: report.nodeType,
        status: report.status,
        finished_at: new Date(finishedAt).toISOString(),
        output: logged.text,
        usage: report.usage,
        error: report.error ? report.error.toJSON() : null,
      });
      steps.end(report.nodeId, {
        status: report.status,
        finished_at: finishedAt,
        output_preview: logged.text,
        truncated: logged.cut || (inputCut.get(report.nodeId) ?? false),
        usage: report.usage ? JSON.stringify(report.usage) : null,
        error: report.error ? JSON.stringify(report.error.toJSON()) : null,
      });
    };
    /** A node without a start: skipped (a branch not taken) or, once the run ends, never started. */
    const logUnstarted = (node: WorkflowNode, status: 'skipped' | 'not_started') => {
      inputCut.set(node.id, false);
      events.add('node.finished', { node_id: node.id, node_type: node.type, status, finished_at: null, output: null, usage: null, error: null });
      steps.start({
        run_id: runId,
        node_id: node.id,
        node_type: node.type,
        status,
        started_at: null,
        finished_at: null,
        input_preview: null,
        output_preview: null,
        truncated: false,
        usage: null,
        error: null,
      });
    };
    /** Every node has a log entry once the run ends: those that never started say so. */
    const logNotStarted = () => {
      for (const node of snapshot.nodes) if (!inputCut.has(node.id)) logUnstarted(node, 'not_started');
    };

    let end: { status: 'completed' | 'failed' | 'cancelled'; output: string | null; error: string | null; usage: string | null };
    try {
      const { output } = await executeGraph(snapshot, inputs, heldModels, {
        signal: controller.signal,
        hooks: {
          onStepStart: stepStart,
          onStepDelta: (node, text) => events.add('node.delta', { node_id: node.id, text }),
          onStepEnd: stepEnd,
          onStepSkipped: (node) => logUnstarted(node, 'skipped'),
          shouldContinue,
        },
      });
      end = { status: 'completed', output: JSON.stringify(output), error: null, usage: null };
    } catch (err) {
      if (controller.signal.reason instanceof Interrupted || controller.signal.reason instanceof StoreUnavailable) {
        steps.discard();
        events.discard();
        throw controller.signal.reason;
      }
      const failure = err instanceof RunFailure ? err : new RunFailure('internal_error', (err as Error).message);
      end = { status: failure.code === 'cancelled' ? 'cancelled' : 'failed', output: null, error: JSON.stringify(failure.toJSON()), usage: null };
    } finally {
      clearTimeout(timer);
      clearTimeout(claimTimer);
      unwatch(runId);
      job.signal.removeEventListener('abort', onJobAbort);
    }
    end.usage = JSON.stringify(usage);
    logNotStarted();
    // The log and the stream are complete before the run is seen finished: the writes under way
    // are done, and what is left goes in the transaction that ends the run.
    let logWritten = true;
    const logFailed = (err: unknown) => {
      ctx.logger.error({ err, runId }, 'run log write failed');
      logWritten = false;
      if (end.status === 'completed') {
        end = {
          ...end,
          status: 'failed',
          output: null,
          error: JSON.stringify(new RunFailure('internal_error', `The run's log could not be written: ${(err as Error).message}`).toJSON()),
        };
      }
    };
    const [stepsClosed, eventsClosed] = await Promise.allSettled([steps.close(), events.close()]);
    for (const closed of [stepsClosed, eventsClosed]) {
      // The store stayed away longer than the budget: the job fails and pg-boss retries it later.
      if (closed.status === 'rejected' && closed.reason instanceof StoreUnavailable) throw closed.reason;
    }
    if (stepsClosed.status === 'rejected') logFailed(stepsClosed.reason);
    // The stream is not the run: a lost event write is logged, the run's own outcome stands.
    if (eventsClosed.status === 'rejected') ctx.logger.error({ err: eventsClosed.reason, runId }, 'run event write failed');

    // A claim that failed: the job fails, and pg-boss retries it. One that was refused (the run was
    // cancelled meanwhile): the run is not this attempt's to end.
    if (claiming && !(await claiming)) {
      if (claimFailure !== undefined) throw claimFailure;
      ctx.logger.info({ runId, status: 'superseded', attempt }, 'run ended');
      return;
    }
    // Never claimed: the end's update takes the run from queued, started when execution began.
    const holder: EndingAttempt = claiming ? { attempt } : { attempt, startedAt };
    const finishedAt = now();
    const rest = events.rest();
    /** Ends the run as `end` says, with the steps not yet written; the end events are made from the run as this attempt ends it. */
    const finish = (unwritten: readonly NewStep[]) => {
      const ending = { ...end, finished_at: finishedAt, duration_ms: Math.max(0, finishedAt - startedAt) };
      const ended: RunRow = { ...run, ...ending, started_at: startedAt };
      const final: FinalEvents = { events: [...rest.events, ...runEndEvents(ended)], after: rest.after };
      return { ended, finishing: stored(() => runsStore(ctx.db).finish(runId, holder, ending, final, unwritten)) };
    };
    const unwritten = logWritten ? steps.rest() : [];
    let { ended, finishing } = finish(unwritten);
    let finished: boolean;
    try {
      finished = await finishing;
    } catch (err) {
      if (err instanceof StoreUnavailable || !unwritten.length) throw err;
      // The store refused the end with the log's last steps: it fails, without them.
      logFailed(err);
      ({ ended, finishing } = finish([]));
      finished = await finishing;
    }
    // Not finished by us: the run was cancelled (its state already says so) or taken over. A
    // cancel leaves the log of the attempt that held the run to it: its last steps are written.
    if (!finished && claiming && logWritten && unwritten.length) {
      await stored(() => runsStore(ctx.db).appendSteps(unwritten)).catch((err: unknown) => {
        if (err instanceof StoreUnavailable) throw err;
        ctx.logger.error({ err, runId }, 'run log write failed');
      });
    }
    if (finished) {
      if (logWritten) rememberEnded(ended, steps.written());
      announceEnded(runId);
    }
    ctx.logger.info({ runId, status: finished ? end.status : 'superseded', attempt }, 'run ended');
    if (finished) observeRunFinished(end.status, finishedAt - startedAt);
  }

  return {
    async handle(runId, job) {
      const run = await claim(runId, job);
      if (run === null) return;
      await execute(run, job);
    },
    abortLocal(runId) {
      executing.get(runId)?.controller.abort(new RunFailure('cancelled', 'The run was cancelled.'));
    },
    endedHere: (runId) => endedHere.get(runId),
    expect(run) {
      if (run.graph.length + run.inputs.length > KEPT_RUN_MAX_CHARS) return;
      handedOver.delete(run.id);
      handedOver.set(run.id, run);
      if (handedOver.size > HANDOVER_MAX_RUNS) handedOver.delete(handedOver.keys().next().value!);
    },
  };
}

/** Every worker sweeps this often: a stuck run is noticed within seconds. */
export const SWEEP_INTERVAL_MS = 5_000;
/** A run younger than this is never swept (its job is being created, or just claimed it). */
const SWEEP_GRACE_MS = 10_000;

/**
 * The backstop behind "no accepted run is ever lost", run by every worker every few seconds:
 * - a run queued for a few seconds may have no job (the API process died between storing the run
 *   and enqueueing it, or its job failed for good): enqueue it again; the queue keeps one job per
 *   run, so this is a no-op when its job exists;
 * - a run `running` whose job is neither queued nor held (pg-boss gave up on it: its worker died on
 *   the last delivery, or every delivery met a store outage) has no one to finish it: fail it with
 *   the cause of its job's last failure, `store_unavailable` or `worker_lost`, closing its steps.
 */
export async function sweepStuckRuns(ctx: RunnerContext, queue: Pick<RunQueue, 'enqueue' | 'jobState' | 'announceRunEnded'>): Promise<void> {
  const now = ctx.now();
  const announceEnded = quietly(ctx, 'run end', (id) => queue.announceRunEnded(id));
  for (const id of await store.listRunsStuckSince(ctx.db, 'queued', now - SWEEP_GRACE_MS, 100)) {
    await queue.enqueue(id);
  }
  for (const id of await store.listRunsStuckSince(ctx.db, 'running', now - SWEEP_GRACE_MS, 100)) {
    const job = await queue.jobState(id);
    if (job.live) continue; // pg-boss notices a dead worker by its heartbeat and retries the job
    const cause = job.lastFailure ?? 'worker_lost';
    if (await runsStore(ctx.db).failUnfinished(id, abandonedRunError(cause), now, runEndEvents)) {
      announceEnded(id);
      ctx.logger.error({ runId: id, cause }, 'run failed: no attempt left');
    }
  }
}
