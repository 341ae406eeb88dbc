// `Prefer: wait=N` (RFC 7240 section 4.3) on the run endpoints: answer as soon as the run is
// terminal, or after N seconds. The wake-up is the notice a process gives when it ends a run
// (queue.ts announceRunEnded): at once to its own waiters, and by NOTIFY, heard on one LISTEN
// connection per process, to the others. No poll loop.
import type { EndedRun } from './runner.ts';
import type { RunDetail } from './service.ts';
import * as store from './store.ts';

/** The longest wait a client may ask for; a longer one is cut to this (and Preference-Applied says so). */
export const MAX_WAIT_SECONDS = 60;

/**
 * The `wait` preference of a Prefer header, in whole seconds, or undefined when there is none.
 * Never silently dropped when it is a number (`wait=1.5` and huge values were): a
 * fraction is rounded up, anything over MAX_WAIT_SECONDS (however many digits) is cut to it, and
 * Preference-Applied tells the client what applied. Preferences the service does not know, and
 * malformed ones (`wait=soon`, negatives), are ignored, as RFC 7240 section 2 asks.
 */
export function preferredWait(header: string | undefined): number | undefined {
  if (!header) return undefined;
  for (const preference of header.split(',')) {
    const [token] = preference.split(';');
    const match = /^\s*wait\s*=\s*"?(\d+(?:\.\d+)?)"?\s*$/i.exec(token ?? '');
    if (match) return Math.min(Math.ceil(Number(match[1])), MAX_WAIT_SECONDS);
  }
  return undefined;
}

/** Tells of each run that ends, in any process; `null` when some may have ended unheard (reconnect). */
export type RunEndedFeed = (listener: (runId: string | null) => void) => Promise<() => void>;

/**
 * The notices of run ends that concern one run, counted from when the listener began, which may be
 * before the run exists: a POST listens before it queues its run, so that run cannot end unheard.
 */
export interface RunEndListener {
  /** Names the run (once): notices heard since the listener began that concern it count. */
  follow(runId: string): void;
  /** Notices so far of the run's end, and reconnects' nulls (its end may have gone unheard). */
  readonly notices: number;
  /** The run as this process's worker ended it, if it did a moment ago (runner.ts endedHere). */
  endedHere(): EndedRun | undefined;
  /** Resolves once `notices` is past `seen` (at once if it is already), after `ms`, or when `signal` aborts. */
  nextNotice(seen: number, ms: number, signal?: AbortSignal): Promise<void>;
  stop(): void;
}

/**
 * Begins listening to `feed`: until the run is named, it keeps what it hears (a few ids, for as
 * long as a start takes). `endedHere`: the runs this process's worker ended a moment ago.
 */
export async function listenForRunEnds(
  feed: RunEndedFeed,
  endedHere?: (runId: string) => EndedRun | undefined,
): Promise<RunEndListener> {
  let runId: string | undefined;
  let early: (string | null)[] = []; // heard before the run was named
  let notices = 0;
  let wake = () => {};
  const concerns = (id: string | null) => id === null || id === runId;
  const stop = await feed((id) => {
    if (runId === undefined) early.push(id);
    else if (concerns(id)) {
      notices++;
      wake();
    }
  });
  return {
    get notices() {
      return notices;
    },
    endedHere: () => (runId === undefined ? undefined : endedHere?.(runId)),
    follow(id) {
      runId = id;
      notices += early.filter(concerns).length;
      early = [];
    },
    nextNotice(seen, ms, signal) {
      return new Promise<void>((resolve) => {
        if (notices !== seen || signal?.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          wake = () => {};
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        wake = done;
      });
    },
    stop,
  };
}

// A waiting run (an approval node) will not end by itself: the wait is over then too.
const isTerminal = (status: string) => (store.TERMINAL as readonly string[]).includes(status) || status === 'waiting';

/**
 * Reads the run with `read` until it is terminal (`read(true)` when a notice came since the last
 * read: the run ended, or a reconnect may have hidden its end), waiting between reads for a notice
 * that it ended; gives up after `seconds` (or when `signal` aborts: the client left) and returns
 * the last read. `listener` follows the run and began before the first read, so an end between
 * the two is not missed. With `queued` (the run as this request queued it, after `listener`
 * began), there is no first read: the run cannot have ended unheard, and is read once a notice
 * comes or the wait is over.
 */
export async function readWhenEnded<T extends { status: string }>(
  listener: RunEndListener,
  seconds: number,
  read: (noticed: boolean) => Promise<T>,
  signal?: AbortSignal,
  queued?: { status: string },
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  // Notices are counted from before each read: one that comes while a read is under way (the
  // read may have seen the run before its end) makes another read, never a wait for the next.
  // A queued run was "read" when the listener began: every notice since is unseen.
  let seen = queued ? 0 : listener.notices;
  let run = queued ? undefined : await read(false);
  let status = run ? run.status : queued!.status;
  while (!isTerminal(status) && !signal?.aborted) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    await listener.nextNotice(seen, left, signal); // at once if a notice came while reading
    const noticed = listener.notices !== seen;
    seen = listener.notices;
    if (signal?.aborted) break;
    run = await read(noticed);
    status = run.status;
    if (!noticed) break; // timed out: answer with the run as it is now
  }
  return run ?? (await read(false));
}

/**
 * readWhenEnded for a run of the API, which `read` reads (service.ts getRun): woken by a notice
 * of the run's end, the run and its log as this process's worker ended it, when it did, without
 * reading it back (the same rows the store now has). The request read the run through `read`
 * before it waited, or queued it itself, so the run was `owner`'s and its workflow not gone then;
 * a delete that lands between the end and this answer is answered as if it came just after.
 */
export function readRunWhenEnded(
  listener: RunEndListener,
  seconds: number,
  owner: { userId: number; workflowId: string },
  read: () => Promise<RunDetail>,
  signal?: AbortSignal,
  queued?: { status: string },
): Promise<RunDetail> {
  const readAfter = async (noticed: boolean) => {
    const here = noticed ? listener.endedHere() : undefined;
    return here && here.userId === owner.userId && here.workflowId === owner.workflowId ? here.detail : read();
  };
  return readWhenEnded(listener, seconds, readAfter, signal, queued);
}
