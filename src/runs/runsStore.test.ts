// The runs store's contract (runsStore.ts), one suite for both adapters against the real stores:
// PostgreSQL's transactions and MySQL's one-round-trip (CI sets TEST_MYSQL_URL, so both run there).
// Each state change is conditional on the state it expects: whoever matches the row wins.
// (How a run ends, finish, has its own file: runEnd.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { runOwner, storedRun } from '../../test/support/storedRuns.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { loadConfig } from '../config.ts';
import { createWorkflow } from '../workflows/service.ts';
import { listRunEventsAfter } from './events.ts';
import { runsStore, type RunsStore } from './runsStore.ts';
import { newRunId } from './service.ts';
import { LOG_TEXT_MAX } from './stepLog.ts';
import * as reads from './store.ts';
import type { NewRunRow, NewStepRow, RunRow, RunStatus } from './store.ts';

const FAILURE = JSON.stringify({ code: 'worker_lost', message: 'The worker running this run stopped.', node_id: null });
const endEvents = (ended: RunRow) => [{ type: 'run.finished' as const, data: { status: ended.status } }];

describe.each(testDialects())('the runs store on %s', (dialect) => {
  let testDb: TestDb;
  let store: RunsStore;
  let owner: { userId: number; workflowId: string };

  beforeAll(async () => {
    testDb = await createTestDb(dialect);
    store = runsStore(testDb.db);
    owner = await runOwner(testDb.db, 'Stored');
  });
  afterAll(async () => {
    await testDb?.destroy();
  });

  const stored = (status: RunStatus, attempts: number) => storedRun(testDb.db, owner, status, attempts);
  const find = async (id: string) => (await reads.findRun(testDb.db, id))!;
  const stepsOf = async (id: string) => (await reads.listSteps(testDb.db, id)).map((s) => `${s.node_id} ${s.status}`);
  const eventsOf = async (id: string) =>
    (await listRunEventsAfter(testDb.db, id, 0, 100)).map((e) => `${e.seq} ${e.type}`);
  const queued = (workflowId = owner.workflowId): NewRunRow => ({
    id: newRunId(),
    workflow_id: workflowId,
    user_id: owner.userId,
    status: 'queued',
    inputs: '{}',
    graph: '{"version":1,"nodes":[],"edges":[]}',
    output: null,
    error: null,
    usage: null,
    idempotency_key: null,
    attempts: 0,
    created_at: 1_000,
    started_at: null,
    finished_at: null,
    duration_ms: null,
  });
  /** Another workflow of the owner: its own count of unfinished runs starts at none. */
  const anotherWorkflow = async (name: string) =>
    (
      await createWorkflow({ db: testDb.db, config: loadConfig({}), now: Date.now }, owner.userId, {
        name,
        ...seedGraph(),
      })
    ).id;
  const step = (runId: string, nodeId: string, status = 'running'): NewStepRow => ({
    run_id: runId,
    node_id: nodeId,
    node_type: 'text_input',
    status,
    started_at: 1_000,
    finished_at: null,
    input_preview: null,
    output_preview: null,
    output_json: false,
    truncated: false,
    usage: null,
    error: null,
  });

  it("starts runs within the user's limit of unfinished runs: the first that fit are stored, the rest are over it", async () => {
    const workflowId = await anotherWorkflow('Quota');
    const user = { ...owner, workflowId };
    await storedRun(testDb.db, user, 'running', 1);
    const rows = [queued(workflowId), queued(workflowId), queued(workflowId)];
    expect(await store.startWithinQuota(rows, 3)).toEqual(['inserted', 'inserted', 'over_limit']); // 1 of 3 taken
    expect((await find(rows[0]!.id)).status).toBe('queued');
    expect(await reads.findRun(testDb.db, rows[2]!.id)).toBeUndefined();
  });

  it('refuses every start once the workflow was deleted, and starts of several users or workflows together', async () => {
    const workflowId = await anotherWorkflow('Deleted');
    await testDb.db('workflows').where({ id: workflowId }).update({ deleted_at: 5 });
    const row = queued(workflowId);
    expect(await store.startWithinQuota([row], 10)).toEqual(['workflow_deleted']);
    expect(await reads.findRun(testDb.db, row.id)).toBeUndefined();
    await expect(store.startWithinQuota([queued(), queued(workflowId)], 10)).rejects.toThrow(
      'not all of one user and one workflow',
    );
  });

  it('claims a queued run for the attempt after the one read, once', async () => {
    const id = await stored('queued', 0);
    expect(await store.claim(id, 1, 2_000)).toBe(false); // fenced on the attempt read
    expect(await store.claim(id, 0, 2_000)).toBe(true);
    expect(await store.claim(id, 0, 2_000)).toBe(false);
    expect(await find(id)).toMatchObject({ status: 'running', attempts: 1, started_at: 2_000 });
  });

  it('takes over a running run from its dead attempt: the next attempt, its first start kept (duration spans every attempt), and the steps it finished kept to resume after', async () => {
    const id = await stored('running', 1);
    const firstStart = (await find(id)).started_at;
    expect(firstStart).not.toBeNull();
    const ended = (nodeId: string, status: string, output: string | null) => ({
      ...step(id, nodeId, status),
      finished_at: 1_500,
      output_preview: output,
    });
    await store.appendSteps([
      ended('a', 'completed', 'out a'),
      step(id, 'b'),
      ended('c', 'skipped', null),
      ended('d', 'failed', null),
      ended('e', 'failed', null),
      ended('f', 'cancelled', null),
      ended('g', 'completed', 'x'.repeat(LOG_TEXT_MAX)),
    ]);
    expect(await store.takeOver(id, 2, 3_000, [])).toBeUndefined();
    expect(await stepsOf(id)).toHaveLength(7);
    expect(await store.takeOver(id, 1, 3_000, ['e'])).toEqual([
      { node_id: 'a', status: 'completed', output_preview: 'out a', output_json: false, usage: null },
      { node_id: 'c', status: 'skipped', output_preview: null, output_json: false, usage: null },
      { node_id: 'e', status: 'failed', output_preview: null, output_json: false, usage: null }, // continued past (on_error: continue)
    ]);
    expect(await find(id)).toMatchObject({ status: 'running', attempts: 2, started_at: firstStart });
    // b was mid-call, d failed the run, f was stopped, g's output was cut in the log: they run again.
    expect(await stepsOf(id)).toEqual(['a completed', 'c skipped', 'e failed']);
  });

  it('appends steps in execution order and ends the one still running', async () => {
    const id = await stored('running', 1);
    await store.appendSteps([step(id, 'a'), step(id, 'b', 'skipped')]);
    await store.endStep(id, 'a', {
      status: 'completed',
      finished_at: 1_500,
      output_preview: 'out',
      output_json: false,
      truncated: false,
      usage: null,
      error: null,
    });
    expect(await stepsOf(id)).toEqual(['a completed', 'b skipped']);
  });

  it("keeps a switch's chosen case: written at its step's end or with the step, and kept by a takeover", async () => {
    const id = await stored('running', 1);
    const chosen = { status: 'completed', finished_at: 1_500, output_preview: 'x', chosen_case: 'default' };
    await store.appendSteps([step(id, 'slow'), { ...step(id, 'fast'), ...chosen }]);
    await store.endStep(id, 'slow', {
      status: 'completed',
      finished_at: 1_600,
      output_preview: 'out',
      output_json: false,
      truncated: false,
      usage: null,
      error: null,
      chosen_case: 'urgent',
    });
    await store.takeOver(id, 1, 3_000, []);
    const cases = await testDb.db('run_steps').where({ run_id: id }).orderBy('id').select('node_id', 'chosen_case');
    expect(cases).toEqual([
      { node_id: 'slow', chosen_case: 'urgent' },
      { node_id: 'fast', chosen_case: 'default' },
    ]);
  });

  it('appends events numbered after the last one, reading it when unknown or taken', async () => {
    const id = await stored('running', 1);
    expect(await store.appendEvents(id, 0, [{ type: 'run.status', data: { status: 'running' } }], 1_000)).toBe(1);
    expect(await store.appendEvents(id, undefined, [{ type: 'node.started', data: {} }], 1_000)).toBe(2);
    expect(await store.appendEvents(id, 0, [{ type: 'node.finished', data: {} }], 1_000)).toBe(3); // 1 was taken
    expect(await eventsOf(id)).toEqual(['1 run.status', '2 node.started', '3 node.finished']);
  });

  it('cancels a queued or running run with its end events, and not a finished one', async () => {
    const id = await stored('running', 1);
    expect(await store.cancel(id, 4_000, '{"code":"cancelled","message":"The run was cancelled."}', endEvents)).toBe(
      true,
    );
    expect(await find(id)).toMatchObject({ status: 'cancelled', finished_at: 4_000 });
    expect(await eventsOf(id)).toEqual(['1 run.finished']);
    expect(await store.cancel(id, 5_000, '{"code":"cancelled","message":"again"}')).toBe(false);
    expect(await store.cancel(await stored('queued', 0), 4_000, '{"code":"cancelled","message":"x"}')).toBe(true);
  });

  it('fails an unfinished run and closes the steps its lost attempt left running; a finished run stays', async () => {
    const id = await stored('running', 1);
    await store.appendSteps([step(id, 'a', 'completed'), step(id, 'b')]);
    expect(await store.failUnfinished(id, FAILURE, 6_000, endEvents)).toBe(true);
    expect(await find(id)).toMatchObject({ status: 'failed', error: FAILURE, finished_at: 6_000 });
    expect(await stepsOf(id)).toEqual(['a completed', 'b failed']);
    expect(await eventsOf(id)).toEqual(['1 run.finished']);
    expect(await store.failUnfinished(id, FAILURE, 7_000)).toBe(false);
  });

  it('requeues a run failed with the given error only', async () => {
    const id = await stored('queued', 0);
    expect(await store.failUnfinished(id, FAILURE, 6_000)).toBe(true);
    expect(await store.requeue(id, '{"code":"other"}')).toBe(false);
    expect(await store.requeue(id, FAILURE)).toBe(true);
    expect(await find(id)).toMatchObject({ status: 'queued', error: null, finished_at: null });
  });
});
