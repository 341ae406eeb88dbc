import { runEventHandlers, type RunStatusEvent } from './runEvents.ts';
import { timelineRefresher } from './timelineRefresh.ts';

// A run that has not ended (src/console/views/runs.ts): its page follows the run's event stream
// (data-events, an EventSource on the same origin, signed in by the session cookie), updating each
// node's row and box as its events arrive, and reads the state part once at the end (data-live:
// the same markup alone, with the run's totals and output). Without EventSource, or when the stream
// fails, it reads the state part once a second until the X-Run-Status header says the run ended.

const ENDED = ['completed', 'failed', 'cancelled'];

function followRun(live: HTMLElement, stateUrl: string): void {
  const ended = (status: string) => {
    live.removeAttribute('data-live');
    document.querySelector('[data-live-note]')?.remove();
    document.querySelector('[data-cancel-run]')?.remove(); // nothing left to cancel (a reload offers Retry)
    const announce = document.querySelector('[data-run-announce]');
    if (announce) announce.textContent = `The run ${status}.`;
  };
  /** Reads the state part once; answers the run's status, or undefined (signed out, gone, unreachable). */
  const readState = async (): Promise<string | undefined> => {
    const res = await fetch(stateUrl, { headers: { Accept: 'text/html' }, cache: 'no-store', redirect: 'error' });
    const status = res.headers.get('X-Run-Status');
    if (!res.ok || !status) return undefined; // signed out or gone: the page as it stands, a reload says why
    live.innerHTML = await res.text();
    if (ENDED.includes(status)) ended(status);
    return status;
  };
  const poll = () => {
    let failures = 0;
    const follow = async () => {
      let status: string | undefined;
      try {
        status = await readState();
        if (status === undefined) return;
        failures = 0;
      } catch {
        failures += 1; // the service restarting, say; after a minute of that, a reload is the way
      }
      if (!(status && ENDED.includes(status)) && failures < 60) setTimeout(follow, 1000);
    };
    setTimeout(follow, 1000);
  };

  const eventsUrl = live.dataset.events;
  if (typeof EventSource !== 'function' || !eventsUrl) return poll();
  const handlers = runEventHandlers(live);
  const stream = new EventSource(eventsUrl);
  let errors = 0;
  for (const [type, handle] of Object.entries(handlers)) {
    stream.addEventListener(type, (event) => {
      errors = 0;
      (handle as (data: unknown) => void)(JSON.parse((event as MessageEvent<string>).data));
    });
  }
  // The timeline is drawn by the server: read again when a node starts, ends, waits or is retried.
  const refreshTimeline = timelineRefresher(live);
  for (const type of ['node.started', 'node.finished', 'node.waiting', 'node.retry'])
    stream.addEventListener(type, refreshTimeline);
  stream.addEventListener('run.finished', (event) => {
    stream.close(); // the server ends the stream here; an EventSource would otherwise reconnect
    const run = JSON.parse((event as MessageEvent<string>).data) as RunStatusEvent;
    handlers['run.status'](run);
    // Said at once, with the status the event gives (not after the read below, which a screen
    // reader user would otherwise wait for); then the run's totals, output and error as the page
    // renders them.
    ended(run.status);
    readState().catch(() => undefined);
  });
  // A refused stream (closed) or one that keeps failing to reconnect: the state part once a second.
  stream.addEventListener('error', () => {
    errors += 1;
    if (stream.readyState === EventSource.CLOSED || errors >= 3) {
      stream.close();
      poll();
    }
  });
}

/** Follows the run on its page, when the page shows one that has not ended. */
export function followLiveRun(): void {
  const live = document.querySelector<HTMLElement>('[data-live]');
  const stateUrl = live?.dataset.live;
  if (live && stateUrl) followRun(live, stateUrl);
}
