// `Prefer: wait=N` (RFC 7240 section 4.3) on the run endpoints: answer as soon as the run is
// terminal, or after N seconds. The wake-up is the notice a process gives when it ends a run
// (queue.ts announceRunEnded): at once to its own waiters, and by NOTIFY, heard on one LISTEN
// connection per process, to the others. No poll loop.
import * as store from './store.ts';

/** The longest wait a client may ask for; a longer one is cut to this (and Preference-Applied says so). */
export const MAX_WAIT_SECONDS = 60;

/**
 * The `wait` preference of a Prefer header, in whole seconds (at most MAX_WAIT_SECONDS), or
 * undefined when there is none. Preferences the service does not know, and malformed ones, are
 * ignored, as RFC 7240 section 2 asks.
 */
export function preferredWait(header: string | undefined): number | undefined {
  if (!header) return undefined;
  for (const preference of header.split(',')) {
    const [token] = preference.split(';');
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*$/i.exec(token ?? '');
    if (match) return Math.min(Number(match[1]), MAX_WAIT_SECONDS);
  }
  return undefined;
}

/** Tells of each run that ends, in any process; `null` when some may have ended unheard (reconnect). */
export type RunEndedFeed = (listener: (runId: string | null) => void) => Promise<() => void>;

const isTerminal = (status: string) => (store.TERMINAL as readonly string[]).includes(status);

/**
 * Reads the run with `read` until it is terminal (`read(true)` when a notice came since the last
 * read: the run ended, or a reconnect may have hidden its end), waiting between reads for a notice that it
 * ended; gives up after `seconds` (or when `signal` aborts: the client left) and returns the last
 * read. The listener is in place before the first read, so an end between the two is not missed.
 * With `peek` (the run's status alone), the first look is a peek: the run is read whole only once
 * it ended or the wait is over (a request that just queued the run saves reading its empty log).
 */
export async function readWhenEnded<T extends { status: string }>(
  feed: RunEndedFeed,
  runId: string,
  seconds: number,
  read: (noticed: boolean) => Promise<T>,
  signal?: AbortSignal,
  peek?: () => Promise<{ status: string }>,
): Promise<T> {
  let wake: () => void = () => {};
  let notices = 0;
  const stop = await feed((id) => {
    if (id === null || id === runId) {
      notices++;
      wake();
    }
  });
  const deadline = Date.now() + seconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => wake();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Notices are counted from before each read: one that comes while a read is under way (the
    // read may have seen the run before its end) makes another read, never a wait for the next.
    let seen = notices;
    let run = peek ? undefined : await read(false);
    let status = run ? run.status : (await peek!()).status;
    while (!isTerminal(status) && !signal?.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (notices !== seen) resolve(); // a notice came while reading
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
      const noticed = notices !== seen;
      seen = notices;
      if (signal?.aborted) break;
      run = await read(noticed);
      status = run.status;
      if (!noticed) break; // timed out: answer with the run as it is now
    }
    return run ?? (await read(false));
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    stop();
  }
}
