// One attempt at one run, from its claim (or hold) to its end: what a pg-boss job does to the
// store. The runner (runner.ts) executes the graph; the attempt keeps the run's per-node log and
// event stream (stepLog.ts, eventLog.ts) and ends the run with an update only it can make (the
// `attempts` column is the fence), through the runs store (runsStore.ts).
//
// A queued run is held, not claimed: it is executed at once, and claimed only if it is still
// running after STEP_LOG_DELAY_MS, or has something to write (a slow step's start, an event, a
// call out of the process) before its end. A run that ends sooner goes from `queued` to its end in
// one update, so it costs no claim: like its steps, a client sees it queued until then.
import { callStepsOf } from './callSteps.ts';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { EventLog } from './eventLog.ts';
import type { NewRunEvent } from './events.ts';
import type { ExecutionHooks, StepReport } from './executor.ts';
import { RunFailure } from '../shared/errors.ts';
import type { ModelRouter } from './providers/index.ts';
import type { RunsStore } from './runsStore.ts';
import { runEndEvents, type GraphSnapshot } from './service.ts';
import { continueAfterWaiting, continuedNodes } from './continuedNodes.ts';
import { STEP_LOG_DELAY_MS, StepLog } from './stepLog.ts';
import { StepRecord } from './stepRecord.ts';
import { StoreUnavailable, type Retried } from './storeRetry.ts';
import type { RunJobContext } from './queue.ts';
import { abandonedRunError } from './failures.ts';
import { findRun, listSteps, runStatusAndAttempt, TERMINAL } from './store.ts';
import { reusedEvents } from './retrySeed.ts';
import { rowCost } from './runShapes.ts';
import type { EndingAttempt, FinalEvents, KeptStep, NewStepRow, RunEnd, RunRow, RunStepRow } from './store.ts';

/**
 * The check between nodes trusts an ownership confirmed this recently (by the claim, the status
 * poll or an earlier check) instead of asking the store again: well inside the status poll's
 * second, and a fast graph costs no query per node.
 */
const OWNERSHIP_FRESH_MS = 250;

/** What an attempt needs: the store (its reads and the runs store over it), a retry through outages, the clock, the logger. */
export interface AttemptDeps {
  db: Knex;
  store: RunsStore;
  stored: Retried;
  now(): number;
  logger: Logger;
  /** Tells the run's event streams that events were stored. */
  announceEvents(runId: string): void;
  /** The most events a run may store (RUN_MAX_EVENTS); past it the run fails with `too_many_events`. */
  maxEvents?: number;
}

/**
 * The run as an attempt holds it (`attempts` is the attempt's number), whether the store says so
 * yet, and for a run taken over the steps its earlier attempts finished (the attempt resumes after them).
 */
export interface Held {
  run: RunRow;
  claimed: boolean;
  kept?: readonly KeptStep[];
  /** A retry's first attempt: the steps it reuses (also in `kept`), told of in its stream. */
  reused?: readonly RunStepRow[];
}

/** How the graph's execution ended, before the log is closed: the run's outcome. */
export type Outcome = Pick<RunEnd, 'status' | 'output' | 'error'>;

/** How the attempt ended the run: `ended` as the store now has it with its whole `log`, or not at all (superseded). */
export type AttemptEnd =
  { finished: true; ended: RunRow; log: readonly NewStepRow[] | undefined } | { finished: false };

export class Attempt {
  readonly run: RunRow;
  /** The graph it executes, as the run stored it, and its inputs. */
  readonly snapshot: GraphSnapshot;
  readonly inputs: Record<string, unknown>;
  readonly controller = new AbortController();
  /** Node id -> text of the nodes earlier attempts finished: the execution takes them up without running them. */
  readonly resumed = new Map<string, unknown>();
  /** Nodes earlier attempts logged as skipped: not logged again. */
  private readonly keptSkipped = new Set<string>();
  /** The attempt resumes after steps of earlier attempts. */
  private readonly resuming: boolean;
  /** performance.now() when the store last said this attempt holds the run. */
  confirmedAt = performance.now();
  private claiming: Promise<boolean> | undefined;
  /** Why the claim could not be made (the store stayed away, or refused it): the job is retried. */
  private claimFailure: unknown;
  private readonly claimTimer: NodeJS.Timeout | undefined;
  private readonly startedAt: number;
  private readonly steps: StepLog;
  private readonly events: EventLog;
  /** Each node's log entry and events, and the run's usage. */
  private readonly record: StepRecord;
  private readonly deps: AttemptDeps;

  constructor(deps: AttemptDeps, { run, claimed, kept = [], reused = [] }: Held) {
    this.deps = deps;
    this.run = run;
    this.snapshot = JSON.parse(run.graph) as GraphSnapshot;
    this.inputs = JSON.parse(run.inputs) as Record<string, unknown>;
    this.startedAt = run.started_at ?? deps.now();
    this.resuming = kept.length > 0;
    if (claimed) this.claiming = Promise.resolve(true);
    else this.claimTimer = setTimeout(() => void this.mine(), STEP_LOG_DELAY_MS);
    const mine = () => this.mine();
    this.steps = new StepLog(deps.store, run.id, deps.stored, mine);
    // A first attempt's stream is empty (a guess: were it not, the first write would collide and read).
    const max = deps.maxEvents ?? Infinity;
    const exceeded = () =>
      this.controller.abort(
        new RunFailure(
          'too_many_events',
          `The run passed ${max} stored events (RUN_MAX_EVENTS): use fewer nodes or smaller maps.`,
        ),
      );
    this.events = new EventLog(
      deps.store,
      deps.now,
      run.id,
      deps.stored,
      mine,
      deps.announceEvents,
      run.attempts === 1 ? 0 : undefined,
      { max, exceeded, shown: callStepsOf(this.snapshot.nodes) },
    );
    this.record = new StepRecord(run.id, this.steps, this.events, deps.now);
    for (const step of kept) this.keep(step);
    this.events.add('run.status', { status: 'running' });
    for (const event of reusedEvents(run, reused)) this.events.add(event.type, event.data);
  }

  /** A step an earlier attempt finished: logged already, its usage counts toward the run's. */
  private keep(step: KeptStep): void {
    this.record.inputCut.set(step.node_id, false);
    if (step.status === 'skipped') this.keptSkipped.add(step.node_id);
    else if (step.status !== 'completed') this.resumed.set(step.node_id, '');
    // A value that is not a string was logged as its JSON, whole (a cut output is not kept).
    else
      this.resumed.set(
        step.node_id,
        step.output_json && step.output_preview !== null
          ? (JSON.parse(step.output_preview) as unknown)
          : (step.output_preview ?? ''),
      );
    // A reused step's tokens were spent (and counted) by the run it was copied from.
    if (!step.reused_from)
      this.record.addUsage(step.usage ? (JSON.parse(step.usage) as StepReport['usage']) : null, rowCost(step));
  }

  get attempt(): number {
    return this.run.attempts;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Whether this attempt holds the run, claiming it first if it was only held: a run no longer
   * queued for this attempt (cancelled meanwhile) is not, and its execution stops.
   */
  mine(): Promise<boolean> {
    return (this.claiming ??= this.claimQueued().then(
      (held) => {
        if (held) this.confirmedAt = performance.now();
        else this.controller.abort(new RunFailure('cancelled', 'The run was cancelled.'));
        return held;
      },
      (err: unknown) => {
        this.claimFailure = err;
        this.controller.abort(err);
        return false;
      },
    ));
  }

  /**
   * queued -> running for this attempt, retried through a store outage. An update that committed
   * but whose answer was lost reads back as `running` with our attempt and start time: ours.
   */
  private claimQueued(): Promise<boolean> {
    const { id, attempts, started_at: startedAt } = this.run;
    return this.deps.stored(async () => {
      if (await this.deps.store.claim(id, attempts - 1, startedAt!)) return true;
      const current = await findRun(this.deps.db, id);
      return current?.status === 'running' && current.attempts === attempts && current.started_at === startedAt;
    });
  }

  /** The model router for this attempt: a call out of the process waits for the claim, so a run cancelled while queued reaches no provider. */
  models(models: ModelRouter): ModelRouter {
    return {
      ...models,
      complete: async (request) => {
        if (!models.inProcess(request.model) && !(await this.mine())) throw this.signal.reason;
        return models.complete(request);
      },
    };
  }

  /** The execution's hooks: each node's log entry and events, and the check between nodes. */
  hooks(): ExecutionHooks {
    return {
      onStepStart: (node, input) => this.record.started(node, input),
      onStepDelta: (node, text) => this.events.add('node.delta', { node_id: node.id, text }),
      onStepRetry: (node, attempt, error, delayMs) =>
        this.events.add('node.retry', {
          node_id: node.id,
          attempt,
          error: { code: error.code, message: error.message },
          delay_ms: delayMs,
          // When the failed attempt ended: the stored event's own time is its write's, batched.
          failed_at: new Date(this.deps.now()).toISOString(),
        }),
      onStepEnd: (report) => this.record.ended(report),
      onMapProgress: (node, progress) =>
        this.events.add('node.progress', { node_id: node.id, node_type: node.type, ...progress }),
      onStepWaiting: (node) => this.record.waiting(node),
      onStepSkipped: (node) => (this.keptSkipped.has(node.id) ? undefined : this.record.unstarted(node, 'skipped')),
      shouldContinue: () => this.shouldContinue(),
    };
  }

  /**
   * Another process's cancel, seen between nodes: the store is asked unless the status poll or the
   * claim confirmed the run very recently (the poll also sees it within a second, runner.ts).
   */
  private async shouldContinue(): Promise<boolean> {
    if (performance.now() - this.confirmedAt < OWNERSHIP_FRESH_MS) return true;
    if (!(await this.mine())) return false; // a run not claimed yet is claimed first (it is by now anyway)
    try {
      const current = await this.deps.stored(() => runStatusAndAttempt(this.deps.db, this.run.id));
      const held = current?.status === 'running' && current.attempts === this.attempt;
      if (held) this.confirmedAt = performance.now();
      return held;
    } catch (err) {
      if (!(err instanceof StoreUnavailable)) throw err;
      this.controller.abort(err); // the attempt ends, not the run: the job is retried (runner.ts)
      return false;
    }
  }

  /**
   * Ends the run as `outcome` says, once the log and the stream are complete: the writes under way
   * are done, and what is left (the unwritten steps, the nodes that never started, the end events)
   * goes with the run's end, in one transaction. A log that could not be written fails a run that
   * completed; a lost event write is only logged (the stream is not the run). Throws when the
   * store stayed away (StoreUnavailable) or the claim failed: the job is then retried.
   */
  async finish(outcome: Outcome): Promise<AttemptEnd> {
    for (const node of this.snapshot.nodes)
      if (!this.record.inputCut.has(node.id)) this.record.unstarted(node, 'not_started');
    let end: Outcome = outcome;
    const [stepsClosed, eventsClosed] = await Promise.allSettled([this.steps.close(), this.events.close()]);
    for (const closed of [stepsClosed, eventsClosed]) {
      if (closed.status === 'rejected' && closed.reason instanceof StoreUnavailable) throw closed.reason;
    }
    let logWritten = stepsClosed.status === 'fulfilled';
    if (stepsClosed.status === 'rejected') end = this.logFailed(end, stepsClosed.reason);
    if (eventsClosed.status === 'rejected')
      this.deps.logger.error({ err: eventsClosed.reason, runId: this.run.id }, 'run event write failed');
    // A claim that failed: the job fails, and pg-boss retries it. One that was refused (the run was
    // cancelled meanwhile): the run is not this attempt's to end.
    if (this.claiming && !(await this.claiming)) {
      if (this.claimFailure !== undefined) throw this.claimFailure;
      return { finished: false };
    }
    const unwritten = logWritten ? this.steps.rest() : [];
    const finishedAt = this.deps.now();
    const rest = this.events.rest();
    let written = await this.writeEnd(end, finishedAt, rest, unwritten).catch((err: unknown) => {
      if (err instanceof StoreUnavailable || !unwritten.length) throw err;
      return err instanceof Error ? err : new Error(String(err));
    });
    if (written instanceof Error) {
      // The store refused the end with the log's last steps: it fails, without them.
      end = this.logFailed(end, written);
      logWritten = false;
      written = await this.writeEnd(end, finishedAt, rest, []);
    }
    if (!written.finished) await this.leaveLog(logWritten ? unwritten : []);
    // A resumed run's log holds the earlier attempts' steps too: readers read it from the store.
    else if (logWritten && !this.resuming) return { ...written, log: this.steps.written() };
    return written;
  }

  /** Writes the run's end with `steps`; the end events are made from the run as this attempt ends it. */
  private async writeEnd(
    outcome: Outcome,
    finishedAt: number,
    rest: FinalEvents,
    steps: readonly NewStepRow[],
  ): Promise<AttemptEnd> {
    const end: RunEnd = {
      ...outcome,
      ...this.record.spent(),
      finished_at: finishedAt,
      duration_ms: Math.max(0, finishedAt - this.startedAt),
    };
    const ended: RunRow = { ...this.run, ...end, started_at: this.startedAt };
    const final: FinalEvents = { events: [...rest.events, ...runEndEvents(ended)], after: rest.after };
    // Never claimed: the end's update takes the run from queued, started when execution began.
    const holder: EndingAttempt = this.claiming
      ? { attempt: this.attempt }
      : { attempt: this.attempt, startedAt: this.startedAt };
    const finished = await this.deps.stored(() => this.deps.store.finish(this.run.id, holder, end, final, steps));
    return finished ? { finished, ended, log: undefined } : { finished };
  }

  /**
   * Not ended by this attempt: the run was cancelled (its state already says so) or taken over. A
   * cancel leaves the log of the attempt that held the run to it: its last steps are written, and what it spent.
   */
  private async leaveLog(unwritten: readonly NewStepRow[]): Promise<void> {
    if (!this.claiming) return;
    const { store } = this.deps;
    const writes = [() => store.keepSpent(this.run.id, this.attempt, this.record.spent())];
    if (unwritten.length) writes.unshift(() => store.appendSteps(unwritten));
    for (const write of writes)
      await this.deps.stored(write).catch((err: unknown) => {
        if (err instanceof StoreUnavailable) throw err;
        this.deps.logger.error({ err, runId: this.run.id }, 'run log write failed');
      });
  }

  /** The log could not be written: logged, and a run that completed fails for it. */
  private logFailed(end: Outcome, err: unknown): Outcome {
    this.deps.logger.error({ err, runId: this.run.id }, 'run log write failed');
    if (end.status !== 'completed') return end;
    const failure = new RunFailure('internal_error', `The run's log could not be written: ${(err as Error).message}`);
    return { status: 'failed', output: null, error: JSON.stringify(failure.toJSON()) };
  }

  /** The log and stream closed for a pause (pause.ts): what is left of each, to write with the run's new state; null when not this attempt's. */
  async closeForPause(): Promise<{ steps: NewStepRow[]; events: NewRunEvent[] } | null> {
    if (!(await this.mine())) return null;
    await Promise.all([this.steps.close(), this.events.close()]);
    return { steps: this.steps.rest(), events: this.events.rest().events };
  }

  /** Execution is over (the claim timer stops); nothing is written yet. */
  stop(): void {
    clearTimeout(this.claimTimer);
  }

  /** The attempt was taken away (pg-boss expiry, shutdown, a store outage): nothing more is written. */
  discard(): void {
    this.stop();
    this.steps.discard();
    this.events.discard();
  }
}

/**
 * The run as this job's attempt will hold it, claimed or only held, or null to ack the job and
 * stop. `known`: the run as this process stored it, for a first delivery (its graph and inputs
 * never change after the insert), so it is not read back. `announceEnded`: a run failed here.
 */
export async function beginAttempt(
  deps: AttemptDeps,
  runId: string,
  job: RunJobContext,
  known: RunRow | undefined,
  announceEnded: (runId: string) => void,
): Promise<Held | null> {
  const run = known && job.retryCount === 0 ? known : await deps.stored(() => findRun(deps.db, runId));
  if (!run) {
    deps.logger.warn({ runId }, 'job for an unknown run; dropped');
    return null;
  }
  if (TERMINAL.includes(run.status) || run.status === 'waiting') return null; // e.g. cancelled while queued
  if (run.status === 'queued' && run.attempts > 0) return continueAfterWaiting(deps, run);
  if (run.status === 'queued') {
    // Held: the first write or the end's update fences on `queued` and this attempt. A retry
    // resumes after the steps it reuses (stored with the run, before its job: retrySeed.ts).
    const reused = run.retry_of ? await deps.stored(() => listSteps(deps.db, runId)) : [];
    const held = { ...run, status: 'running' as const, started_at: deps.now(), attempts: run.attempts + 1 };
    return { run: held, claimed: false, ...(reused.length ? { kept: reused, reused } : {}) };
  }
  // `running`: a first delivery finding it so is a duplicate of a live job; leave it to that one.
  if (job.retryCount === 0) return null;
  // A retry: the previous attempt's worker died (missed heartbeats), or its store was unreachable.
  // The store answers now, so a store outage is simply retried, on the last delivery too.
  if (job.lastAttempt && job.previousFailure !== 'store_unavailable') {
    const error = abandonedRunError('worker_lost', job.retryCount + 1);
    if (await deps.stored(() => deps.store.failUnfinished(runId, error, deps.now(), runEndEvents)))
      announceEnded(runId);
    deps.logger.error({ runId, retryCount: job.retryCount }, 'run failed: worker lost on the last attempt');
    return null;
  }
  const startedAt = deps.now();
  // Resumed after the nodes the earlier attempts finished; the rest of the graph runs again.
  const kept = await deps.stored(() => deps.store.takeOver(runId, run.attempts, startedAt, continuedNodes(run)));
  if (!kept) return beginAttempt(deps, runId, job, undefined, announceEnded);
  deps.logger.warn(
    { runId, retryCount: job.retryCount, previousFailure: job.previousFailure, resumedAfter: kept.length },
    'run taken over after its previous attempt failed',
  );
  // The run's start stays its first attempt's (takeOver keeps it), so its duration covers every attempt.
  return { run: { ...run, started_at: run.started_at ?? startedAt, attempts: run.attempts + 1 }, claimed: true, kept };
}
