// What one run may use, and the process's compute pool that enforces the CPU and memory part
// (pool.ts). The executor asks `budget.compute(...)` for anything it computes and checks each
// text it keeps against the size caps; the run's wall clock is RUN_TIMEOUT_SECONDS (runner.ts),
// whose abort also ends a computation under way.
import { availableParallelism } from 'node:os';
import type { Config } from '../../config.ts';
import type { ComputeFunctionName, ComputeFunctions } from './functions.ts';
import { ComputeLimitError, ComputePool, type PoolLimits, type PoolStats } from './pool.ts';
import type { RunCaps } from './runCaps.ts';
import { StepPacer, type PaceStats } from '../stepPace.ts';

/** The budget settings of config.ts, by their environment names. */
export type BudgetConfig = Pick<
  Config,
  | 'COMPUTE_PROCESSES'
  | 'COMPUTE_HEAP_MB'
  | 'COMPUTE_TIME_LIMIT_MS'
  | 'COMPUTE_USER_MAX_PROCESSES'
  | 'RUN_COMPUTE_MAX_MS'
  | 'NODE_TEXT_MAX_CHARS'
  | 'RUN_TEXT_MAX_CHARS'
  | 'RUN_OUTPUT_MAX_CHARS'
  | 'USER_STEPS_PER_SECOND'
>;

export interface RunBudget {
  /** Runs a function of functions.ts for this run (its owner's share of the pool), its value capped at NODE_TEXT_MAX_CHARS. */
  compute<N extends ComputeFunctionName>(
    name: N,
    input: Parameters<ComputeFunctions[N]>[0],
    signal?: AbortSignal,
  ): Promise<Awaited<ReturnType<ComputeFunctions[N]>>>;
  /** The longest text one node may produce (and the longest value a computation may return). */
  nodeTextMaxChars: number;
  /** The most characters a run's node texts may hold together. */
  runTextMaxChars: number;
  /** The longest run output, as stored (JSON). */
  runOutputMaxChars: number;
  /** The run's caps on steps and map items (runCaps.ts); absent, nothing counts them (a budget made without a run). */
  caps?: RunCaps;
  /** Waits for the owner's turn to start a step (USER_STEPS_PER_SECOND); absent, steps are not paced. */
  pace?: (signal?: AbortSignal) => Promise<void>;
}

/**
 * The pool's size when COMPUTE_PROCESSES is 0: one process per core but the one the event loop
 * needs, and at least two, so one user's share (half, below) leaves a process for the others.
 */
export function poolLimits(config: BudgetConfig, cores = availableParallelism()): PoolLimits {
  const processes = config.COMPUTE_PROCESSES || Math.max(2, cores - 1);
  return {
    processes,
    heapMb: config.COMPUTE_HEAP_MB,
    timeLimitMs: config.COMPUTE_TIME_LIMIT_MS,
    ownerMaxProcesses: Math.min(processes, config.COMPUTE_USER_MAX_PROCESSES || Math.ceil(processes / 2)),
  };
}

/** One pool per process and set of limits (test servers of one process with different limits get their own). */
const pools = new Map<string, ComputePool>();

export function processPool(config: BudgetConfig): ComputePool {
  const limits = poolLimits(config);
  const key = JSON.stringify(limits);
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = new ComputePool(limits)));
  return pool;
}

/** One pacer per process and rate (USER_STEPS_PER_SECOND), shared by the runs of every user. */
const pacers = new Map<number, StepPacer>();

function processPacer(rate: number): StepPacer {
  let pacer = pacers.get(rate);
  if (!pacer) pacers.set(rate, (pacer = new StepPacer(rate)));
  return pacer;
}

/** This process's step pacers together (metrics): steps that waited for their turn, and those waiting now. */
export function paceStats(): PaceStats {
  const total = { paced: 0, waiting: 0 };
  for (const pacer of pacers.values()) {
    const stats = pacer.stats();
    total.paced += stats.paced;
    total.waiting += stats.waiting;
  }
  return total;
}

/** Computations refused because their run had spent RUN_COMPUTE_MAX_MS (the pool counts the limits of its calls). */
let runBudgetsSpent = 0;

/** This process's compute pools together (metrics): calls waiting and running, processes, limits broken by kind. */
export function computeStats(): {
  waiting: number;
  running: number;
  processes: number;
  limits: PoolStats['limits'] & { run_time: number };
} {
  const total = {
    waiting: 0,
    running: 0,
    processes: 0,
    limits: { time: 0, memory: 0, too_large: 0, run_time: runBudgetsSpent },
  };
  for (const pool of pools.values()) {
    const stats = pool.stats();
    total.waiting += stats.waiting;
    total.running += stats.running;
    total.processes += stats.processes;
    for (const kind of ['time', 'memory', 'too_large'] as const) total.limits[kind] += stats.limits[kind];
  }
  return total;
}

/**
 * The budget of one run of `owner` (a user id) under `config`. Its computations together may run
 * RUN_COMPUTE_MAX_MS: each gets what is left as its time limit, and none starts once it is spent.
 */
export function runBudget(config: BudgetConfig, owner: string): RunBudget {
  const pool = processPool(config);
  const maxChars = config.NODE_TEXT_MAX_CHARS;
  let spent = 0;
  const ran = (ms: number) => void (spent += ms);
  const rate = config.USER_STEPS_PER_SECOND;
  const pacer = rate > 0 ? processPacer(rate) : undefined;
  return {
    ...(pacer ? { pace: (signal?: AbortSignal) => pacer.take(owner, signal) } : {}),
    compute: (name, input, signal) => {
      const left = config.RUN_COMPUTE_MAX_MS - spent;
      if (left <= 0) {
        runBudgetsSpent += 1;
        return Promise.reject(
          new ComputeLimitError(
            'time',
            `The run's computations took more than ${config.RUN_COMPUTE_MAX_MS} ms together (RUN_COMPUTE_MAX_MS).`,
          ),
        );
      }
      return pool.run(name, input, { owner, maxChars, timeLimitMs: left, ran, ...(signal ? { signal } : {}) });
    },
    nodeTextMaxChars: maxChars,
    runTextMaxChars: config.RUN_TEXT_MAX_CHARS,
    runOutputMaxChars: config.RUN_OUTPUT_MAX_CHARS,
  };
}
