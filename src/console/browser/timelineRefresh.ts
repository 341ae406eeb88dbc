// A run's timeline (src/console/views/timeline.ts) while the run goes on: its bars are drawn by the
// server, so when a node starts, ends, waits or retries the script reads the timeline again
// (`data-timeline-url`, the same markup alone) and swaps it in, at most one read at a time and at
// most one a second; a read that fails leaves the timeline as it was (the run's end reads it anew).

const MIN_GAP_MS = 1000;

/**
 * A listener for each event that changes the timeline; it schedules the read. Events the stream
 * replays on connect read it too (at most once a second): one that happened before the page was
 * drawn may not have been stored yet when it was (a worker writes its log and events behind it).
 */
export function timelineRefresher(live: HTMLElement): () => void {
  const url = live.dataset.timelineUrl;
  let reading = false;
  let again = false;
  let last = 0;
  const read = async () => {
    reading = true;
    again = false;
    last = Date.now();
    try {
      const res = await fetch(url!, { headers: { Accept: 'text/html' }, cache: 'no-store', redirect: 'error' });
      const current = live.querySelector('[data-timeline]');
      if (res.ok && current) {
        const template = document.createElement('template');
        template.innerHTML = await res.text();
        const fresh = template.content.querySelector('[data-timeline]');
        // The table of times stays open if it was.
        if (fresh && current.querySelector('details[open]')) fresh.querySelector('details')?.setAttribute('open', '');
        if (fresh) current.replaceWith(fresh);
      }
    } catch {
      // the service restarting, say: the next event or the run's end reads it again
    } finally {
      reading = false;
      if (again) schedule();
    }
  };
  const schedule = () => {
    if (!url) return;
    if (reading) {
      again = true;
      return;
    }
    setTimeout(() => void read(), Math.max(0, last + MIN_GAP_MS - Date.now()));
  };
  return schedule;
}
