// A process's compute pool: where what a run computes is executed, so no run can exhaust the
// service's process (45 parallel templates grew the API to 4.35 GB and killed it). Each
// slot is a child process with its own capped heap (--max-old-space-size) running one call at a
// time; a call past its time is ended by killing its child, a child that runs out of heap dies
// alone, and either is replaced. Child processes, not worker threads: a worker slot that
// exhausts its resourceLimits in one large allocation aborts the whole process (nodejs/node#47224;
// seen here with a doubled `capture`). Waiting calls are served owner by owner (a user; the one served least recently first), and
// an owner holds at most `ownerMaxProcesses` slots at once, so one user's runs never take every
// slot: others' calls go first.
import { fork, type ChildProcess } from 'node:child_process';
import type { ComputeFunctionName, ComputeFunctions } from './functions.ts';
import { FunctionError } from './functions.ts';
import type { Answer, Task } from './child.ts';

export interface PoolLimits {
  /** Slots (child processes) of the pool. */
  processes: number;
  /** Old-generation heap of each child (V8 --max-old-space-size). */
  heapMb: number;
  /** The longest one call may run before its child is killed. */
  timeLimitMs: number;
  /** Slots one owner may hold at once. */
  ownerMaxProcesses: number;
}

/** A call broke a budget: `time` (COMPUTE_TIME_LIMIT_MS), `memory` (COMPUTE_HEAP_MB) or `too_large` (its value's size cap). */
export class ComputeLimitError extends Error {
  readonly kind: 'time' | 'memory' | 'too_large';
  constructor(kind: 'time' | 'memory' | 'too_large', message: string) {
    super(message);
    this.kind = kind;
    this.name = 'ComputeLimitError';
  }
}

export interface PoolStats {
  waiting: number;
  running: number;
  processes: number;
  /** Calls failed by each limit since the pool started. */
  limits: Record<ComputeLimitError['kind'], number>;
}

export interface CallOptions {
  /** Whose call it is: the unit of fairness. */
  owner: string;
  /** The longest value accepted (a string's length, another value's JSON). */
  maxChars: number;
  /** Aborting drops a waiting call, or kills the child running it; the call rejects with the reason. */
  signal?: AbortSignal;
  /** A shorter time limit than the pool's for this call (what is left of a run's compute budget). */
  timeLimitMs?: number;
  /** Told how long the call ran on its slot (waiting not counted), whatever its outcome. */
  ran?: (ms: number) => void;
}

type Input<N extends ComputeFunctionName> = Parameters<ComputeFunctions[N]>[0];
type Output<N extends ComputeFunctionName> = Awaited<ReturnType<ComputeFunctions[N]>>;

interface Call {
  task: Task;
  owner: string;
  signal: AbortSignal | undefined;
  timeLimitMs: number;
  ran: ((ms: number) => void) | undefined;
  startedAt: number | undefined;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  onAbort(): void;
}

interface Slot {
  child: ChildProcess;
  ready: Promise<void>;
  call: Call | undefined;
  timer: NodeJS.Timeout | undefined;
}

const CHILD_PATH = new URL('./child.ts', import.meta.url);

export class ComputePool {
  readonly limits: PoolLimits;
  private readonly slots = new Set<Slot>();
  /** Waiting calls by owner. */
  private readonly waiting = new Map<string, Call[]>();
  /** When each owner was last given a slot (a turn number): the least recent goes first. */
  private readonly served = new Map<string, number>();
  private turn = 0;
  private readonly running = new Map<string, number>();
  private nextId = 1;
  private closed = false;
  private readonly limitsBroken: Record<ComputeLimitError['kind'], number> = { time: 0, memory: 0, too_large: 0 };

  constructor(limits: PoolLimits) {
    this.limits = {
      ...limits,
      processes: Math.max(1, limits.processes),
      ownerMaxProcesses: Math.max(1, limits.ownerMaxProcesses),
    };
  }

  /** Runs the named function of functions.ts on a compute slot, under the pool's limits. */
  run<N extends ComputeFunctionName>(name: N, input: Input<N>, options: CallOptions): Promise<Output<N>> {
    return new Promise<Output<N>>((resolve, reject) => {
      const { signal, owner } = options;
      if (signal?.aborted) return reject(signal.reason);
      if (this.closed) return reject(new Error('The compute pool is closed.'));
      const call: Call = {
        task: { id: this.nextId++, name, input, maxChars: options.maxChars },
        owner,
        signal,
        timeLimitMs: Math.min(options.timeLimitMs ?? Infinity, this.limits.timeLimitMs),
        ran: options.ran,
        startedAt: undefined,
        resolve: resolve as (value: unknown) => void,
        reject,
        onAbort: () => this.abort(call),
      };
      signal?.addEventListener('abort', call.onAbort, { once: true });
      const queue = this.waiting.get(owner);
      if (queue) queue.push(call);
      else this.waiting.set(owner, [call]);
      this.pump();
    });
  }

  /** Calls waiting for a slot, calls running, live compute processes, and the limits calls broke so far (for tests and metrics). */
  stats(): PoolStats {
    let waiting = 0;
    for (const queue of this.waiting.values()) waiting += queue.length;
    let running = 0;
    for (const n of this.running.values()) running += n;
    return { waiting, running, processes: this.slots.size, limits: { ...this.limitsBroken } };
  }

  close(): void {
    this.closed = true;
    for (const queue of this.waiting.values())
      for (const call of queue) this.settle(call, new Error('The compute pool is closed.'));
    this.waiting.clear();
    for (const slot of [...this.slots]) this.kill(slot, new Error('The compute pool is closed.'));
  }

  /** Hands waiting calls to idle slots (spawning up to `processes`), owner by owner. */
  private pump(): void {
    while (!this.closed) {
      const slot = this.idleSlot();
      if (!slot) return;
      const call = this.nextCall();
      if (!call) return;
      void this.dispatch(slot, call);
    }
  }

  private idleSlot(): Slot | undefined {
    for (const t of this.slots) if (!t.call) return t;
    return this.slots.size < this.limits.processes ? this.spawn() : undefined;
  }

  /** The first waiting call of the owner served least recently among those under their cap. */
  private nextCall(): Call | undefined {
    let chosen: string | undefined;
    for (const owner of this.waiting.keys()) {
      if ((this.running.get(owner) ?? 0) >= this.limits.ownerMaxProcesses) continue;
      if (chosen === undefined || (this.served.get(owner) ?? 0) < (this.served.get(chosen) ?? 0)) chosen = owner;
    }
    if (chosen === undefined) return undefined;
    const queue = this.waiting.get(chosen)!;
    const call = queue.shift()!;
    if (!queue.length) this.waiting.delete(chosen);
    this.served.set(chosen, ++this.turn);
    return call;
  }

  private async dispatch(slot: Slot, call: Call): Promise<void> {
    slot.call = call;
    this.running.set(call.owner, (this.running.get(call.owner) ?? 0) + 1);
    hold(slot.child, true); // a call under way keeps the process alive; an idle pool does not
    await slot.ready;
    if (slot.call !== call) return; // aborted or the slot died while it started
    // The time counts from when the child can run the call, not from its start-up.
    call.startedAt = performance.now();
    const limit = call.timeLimitMs;
    slot.timer = setTimeout(
      () => {
        const which =
          limit < this.limits.timeLimitMs
            ? `the ${limit} ms left of the run's compute budget (RUN_COMPUTE_MAX_MS)`
            : `${limit} ms (COMPUTE_TIME_LIMIT_MS)`;
        this.kill(slot, new ComputeLimitError('time', `The computation ran longer than ${which}.`));
      },
      Math.max(1, limit),
    );
    slot.child.send(call.task);
  }

  private spawn(): Slot {
    const child = fork(CHILD_PATH, [], {
      // Its own flags only (not the service's, nor a test runner's), and no output but errors.
      execArgv: [
        `--max-old-space-size=${this.limits.heapMb}`,
        `--max-semi-space-size=${Math.min(16, this.limits.heapMb)}`,
        '--stack-size=2048',
      ],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: {}, // none of the service's secrets (DATABASE_URL, SECRETS_KEY): a computation needs no environment
    });
    hold(child, false);
    let ready!: () => void;
    const slot: Slot = { child, ready: new Promise<void>((r) => (ready = r)), call: undefined, timer: undefined };
    this.slots.add(slot);
    child.on('message', (message: Answer | 'ready') => {
      if (message === 'ready') return ready();
      if (slot.call?.task.id !== message.id) return;
      this.finish(slot, message);
    });
    child.on('error', (err) => this.retire(slot, new Error(`A compute process failed: ${err.message}`)));
    child.on('exit', (code, signal) => {
      // V8 aborts a process past its heap limit (SIGABRT, or exit code 134 through a shell).
      const outOfMemory = signal === 'SIGABRT' || code === 134;
      this.retire(
        slot,
        outOfMemory
          ? new ComputeLimitError(
              'memory',
              `The computation ran out of its ${this.limits.heapMb} MB of memory (COMPUTE_HEAP_MB).`,
            )
          : new Error(`A compute process stopped (${signal ?? `exit code ${code}`}).`),
      );
    });
    return slot;
  }

  private finish(slot: Slot, answer: Answer): void {
    const call = slot.call!;
    this.release(slot);
    if (answer.ok) this.settle(call, undefined, answer.value);
    else if (answer.kind === 'function') this.settle(call, new FunctionError(answer.code, answer.message));
    else if (answer.kind === 'too_large')
      this.settle(
        call,
        new ComputeLimitError('too_large', `The computed text is longer than ${call.task.maxChars} characters.`),
      );
    else this.settle(call, new Error(`The computation failed: ${answer.message}`));
    this.pump();
  }

  /** The slot's call is over (answered, or failed with its slot): the slot is idle. */
  private release(slot: Slot): Call | undefined {
    const call = slot.call;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.call = undefined;
    hold(slot.child, false);
    if (call) {
      const n = (this.running.get(call.owner) ?? 1) - 1;
      if (n > 0) this.running.set(call.owner, n);
      else this.running.delete(call.owner);
      this.forgetIdle(call.owner);
    }
    return call;
  }

  /** The slot is gone (died, or terminated): its call fails with `failure`, and a new slot may start. */
  private retire(slot: Slot, failure: unknown): void {
    if (!this.slots.delete(slot)) return;
    const call = this.release(slot);
    if (call) this.settle(call, failure);
    this.pump();
  }

  private kill(slot: Slot, failure: unknown): void {
    this.retire(slot, failure);
    slot.child.kill('SIGKILL');
  }

  private abort(call: Call): void {
    const reason: unknown = call.signal?.reason;
    for (const slot of this.slots) if (slot.call === call) return void this.kill(slot, reason);
    const queue = this.waiting.get(call.owner);
    const at = queue?.indexOf(call) ?? -1;
    if (at < 0) return;
    queue!.splice(at, 1);
    if (!queue!.length) this.waiting.delete(call.owner);
    this.forgetIdle(call.owner);
    this.settle(call, reason);
  }

  /** An owner with nothing waiting or running needs no turn number (one that comes back is served first). */
  private forgetIdle(owner: string): void {
    if (!this.running.has(owner) && !this.waiting.has(owner)) this.served.delete(owner);
  }

  private settle(call: Call, err: unknown, value?: unknown): void {
    call.signal?.removeEventListener('abort', call.onAbort);
    if (err instanceof ComputeLimitError) this.limitsBroken[err.kind] += 1;
    if (call.startedAt !== undefined) call.ran?.(performance.now() - call.startedAt);
    if (err !== undefined) call.reject(err);
    else call.resolve(value);
  }
}

/** Whether the child (and its IPC channel) keeps the service's event loop alive. */
function hold(child: ChildProcess, busy: boolean): void {
  const channel = child.channel as { ref(): void; unref(): void } | null | undefined;
  if (busy) {
    child.ref();
    channel?.ref();
  } else {
    child.unref();
    channel?.unref();
  }
}
