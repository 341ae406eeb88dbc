import type { Editor } from './model.ts';

// Follows one run of the edited workflow from the editor: the run page's event stream
// (GET /workflows/{id}/runs/{run_id}/events, the API's streamRunEvents by the session cookie),
// kept in the editor's model (`state.run`: each node's last status and a switch's chosen case),
// with `editor-run` dispatched on the builder after each change so whatever draws the nodes (the
// node list, the canvas) redraws them. Without EventSource, or once the stream fails, the run's
// steps are read once a second instead, until it ends.

export const ENDED = ['completed', 'failed', 'cancelled'];

interface NodeEvent {
  node_id: string;
  status?: string;
  case?: string;
}

export interface RunWatcher {
  /** The run's own status as last told (`queued` until its first event). */
  readonly status: string;
  follow(runId: string): void;
}

/** What a watcher reports besides the model: a sentence for the live region, and "read the steps again". */
export interface WatchHooks {
  announce(text: string): void;
  changed(): void;
}

interface Step {
  node_id: string;
  status: string;
  case?: string;
}

interface Listeners {
  status(status: string | undefined): void;
  node(id: string, status: string, chosen?: string): void;
  waiting(): void;
  changed(): void;
  ended(status: string): void;
  /** The stream closed for good (refused, or the service went away). */
  lost(): void;
}

/** The stream's events as the watcher's steps, while `watching()` says the run is still the one watched. */
function listen(source: EventSource, watching: () => boolean, to: Listeners): void {
  const on = (type: string, handle: (data: NodeEvent) => void) =>
    source.addEventListener(type, (event) => {
      if (watching()) handle(JSON.parse((event as MessageEvent<string>).data) as NodeEvent);
    });
  on('run.status', (d) => to.status(d.status));
  on('node.started', (d) => to.node(d.node_id, 'running'));
  on('node.waiting', (d) => {
    to.node(d.node_id, 'waiting');
    to.waiting();
  });
  on('node.finished', (d) => {
    to.node(d.node_id, d.status ?? 'completed', d.case);
    to.changed();
  });
  on('run.finished', (d) => to.ended(d.status ?? 'completed'));
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED && watching()) to.lost();
  });
}

export function runWatcher(editor: Editor, base: string, hooks: WatchHooks): RunWatcher {
  let stream: EventSource | null = null;
  let status = 'queued';
  let timer: ReturnType<typeof setTimeout> | undefined;

  const tell = () => editor.root.dispatchEvent(new CustomEvent('editor-run'));
  const setNode = (runId: string, id: string, nodeStatus: string, chosen?: string) => {
    const run = editor.state.run;
    if (!run || run.id !== runId) return;
    const was = run.nodes[id];
    if (was?.status === nodeStatus && was.case === chosen) return;
    run.nodes[id] = { status: nodeStatus, ...(chosen !== undefined ? { case: chosen } : {}) };
    tell();
    // A node inside a map's item or a called workflow is its parent's business, not said aloud.
    if (!/[[.]/.test(id)) hooks.announce(`Node ${id}: ${nodeStatus}${chosen !== undefined ? `, case ${chosen}` : ''}.`);
  };
  const ended = (runStatus: string) => {
    status = runStatus;
    stream?.close();
    stream = null;
    clearTimeout(timer);
    hooks.announce(`The run ${runStatus}.`);
    hooks.changed();
  };

  /** The fallback: the run's steps read once a second until it ends. */
  const poll = (runId: string) => {
    const read = async () => {
      if (editor.state.run?.id !== runId) return;
      const res = await fetch(`${base}/runs/${runId}/detail`, { cache: 'no-store', redirect: 'error' });
      if (!res.ok) return;
      const run = ((await res.json()) as { data: { status: string; logs: Step[] } }).data;
      for (const step of run.logs) setNode(runId, step.node_id, step.status, step.case);
      hooks.changed();
      if (ENDED.includes(run.status)) ended(run.status);
      else timer = setTimeout(() => void read().catch(() => undefined), 1000);
    };
    timer = setTimeout(() => void read().catch(() => undefined), 1000);
  };

  return {
    get status() {
      return status;
    },
    follow(runId: string) {
      stream?.close();
      clearTimeout(timer);
      status = 'queued';
      editor.state.run = { id: runId, nodes: {} };
      tell();
      if (typeof EventSource !== 'function') return poll(runId);
      stream = new EventSource(`${base}/runs/${runId}/events`);
      const watching = () => editor.state.run?.id === runId;
      listen(stream, watching, {
        status: (s) => {
          status = s ?? status;
        },
        node: (id, nodeStatus, chosen) => setNode(runId, id, nodeStatus, chosen),
        waiting: () => {
          status = 'waiting';
          hooks.changed();
        },
        changed: hooks.changed,
        ended,
        lost: () => {
          if (ENDED.includes(status)) return;
          stream = null;
          poll(runId);
        },
      });
    },
  };
}
