// A stored run's wire shape (service.ts toRun): the workflow version comes from the run's graph
// snapshot, read from its start when the snapshot is as startRun writes it, else parsed whole.
import { describe, expect, it } from 'vitest';
import { toRun } from './service.ts';
import type { RunRow } from './store.ts';

const row = (graph: string): RunRow => ({
  seq: 1,
  id: 'run_1',
  workflow_id: 'wf_1',
  user_id: 1,
  status: 'queued',
  inputs: '{"q":"x"}',
  graph,
  output: null,
  error: null,
  usage: null,
  idempotency_key: null,
  attempts: 0,
  created_at: 0,
  started_at: null,
  finished_at: null,
  duration_ms: null,
});

describe('toRun', () => {
  it.each([
    [
      'as startRun writes it',
      JSON.stringify({ version: 12, nodes: [{ id: 'a', config: { version: 3 } }], edges: [] }),
      12,
    ],
    ['with no nodes after it', '{"version":7}', 7],
    ['written otherwise (spaces, another key first)', '{"nodes": [], "version": 4, "edges": []}', 4],
  ])('reads the workflow version of a snapshot %s', (_, graph, version) => {
    expect(toRun(row(graph)).workflow_version).toBe(version);
  });
});
