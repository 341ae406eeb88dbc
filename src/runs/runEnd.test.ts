// How a worker ends a run (runsStore.ts finish), against the real store (PostgreSQL; MySQL too when
// TEST_MYSQL_URL is set): the fenced update and the log's last steps and events in one
// transaction, from `running` (a claimed attempt) or straight from `queued` (an attempt that never
// claimed the run); on MySQL in one round trip, outside knex's pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { runOwner, storedRun } from '../../test/support/storedRuns.ts';
import { listRunEventsAfter } from './events.ts';
import * as store from './store.ts';
import type { NewStepRow, RunEnd, RunStatus } from './store.ts';
import { runsStore } from './runsStore.ts';

describe.each(testDialects())('ending a run on %s', (dialect) => {
  let testDb: TestDb;
  let owner: { userId: number; workflowId: string };

  beforeAll(async () => {
    testDb = await createTestDb(dialect);
    owner = await runOwner(testDb.db, 'Ended');
  });
  afterAll(async () => {
    await testDb?.destroy();
  });

  const storedRunOf = (status: RunStatus, attempts: number) => storedRun(testDb.db, owner, status, attempts);

  const step = (runId: string, nodeId: string, status = 'completed'): NewStepRow => ({
    run_id: runId,
    node_id: nodeId,
    node_type: 'text_input',
    status,
    started_at: 1_000,
    finished_at: 1_001,
    input_preview: `input of ${nodeId}`,
    output_preview: `output of ${nodeId}`,
    output_json: false,
    truncated: nodeId === 'b',
    usage: null,
    error: null,
  });
  const end = (status: RunEnd['status'] = 'completed'): RunEnd => ({
    status,
    output: '{"out":"x"}',
    error: null,
    usage: '{"total_tokens":0}',
    finished_at: 2_000,
    duration_ms: 900,
  });
  const final = (after = 0) => ({
    events: [
      { type: 'run.status' as const, data: { status: 'completed' } },
      { type: 'run.finished' as const, data: { id: 'x' } },
    ],
    after,
  });
  const eventsOf = async (runId: string) =>
    (await listRunEventsAfter(testDb.db, runId, 0, 100)).map((e) => `${e.seq} ${e.type}`);
  const stepsOf = async (runId: string) =>
    (await store.listSteps(testDb.db, runId)).map((s) => [s.node_id, s.status, s.truncated]);

  it('an attempt that never claimed the run ends it straight from queued, with its start, its steps and its events', async () => {
    const runId = await storedRunOf('queued', 0);
    expect(
      await runsStore(testDb.db).finish(runId, { attempt: 1, startedAt: 1_100 }, end(), final(), [
        step(runId, 'a'),
        step(runId, 'b'),
      ]),
    ).toBe(true);
    expect(await store.findRun(testDb.db, runId)).toMatchObject({
      status: 'completed',
      attempts: 1,
      started_at: 1_100,
      finished_at: 2_000,
      duration_ms: 900,
      output: '{"out":"x"}',
    });
    expect(await stepsOf(runId)).toEqual([
      ['a', 'completed', false],
      ['b', 'completed', true],
    ]);
    expect(await eventsOf(runId)).toEqual(['1 run.status', '2 run.finished']);
  });

  it('an unclaimed attempt writes nothing once the run was cancelled or claimed by another attempt', async () => {
    const cancelled = await storedRunOf('queued', 0);
    expect(
      await runsStore(testDb.db).cancel(cancelled, 1_500, '{"code":"cancelled","message":"The run was cancelled."}'),
    ).toBe(true);
    expect(
      await runsStore(testDb.db).finish(cancelled, { attempt: 1, startedAt: 1_100 }, end(), final(), [
        step(cancelled, 'a'),
      ]),
    ).toBe(false);
    expect(await store.findRun(testDb.db, cancelled)).toMatchObject({ status: 'cancelled', attempts: 0 });
    expect(await stepsOf(cancelled)).toEqual([]);
    expect(await eventsOf(cancelled)).toEqual([]);

    const claimedElsewhere = await storedRunOf('queued', 0);
    expect(await runsStore(testDb.db).claim(claimedElsewhere, 0, 1_050)).toBe(true);
    expect(
      await runsStore(testDb.db).finish(claimedElsewhere, { attempt: 1, startedAt: 1_100 }, end(), final(), [
        step(claimedElsewhere, 'a'),
      ]),
    ).toBe(false);
    expect(await store.findRun(testDb.db, claimedElsewhere)).toMatchObject({
      status: 'running',
      attempts: 1,
      started_at: 1_050,
    });
    expect(await stepsOf(claimedElsewhere)).toEqual([]);
  });

  it('a claimed attempt ends its run with its steps; a stale attempt writes nothing', async () => {
    const runId = await storedRunOf('running', 2);
    expect(await runsStore(testDb.db).finish(runId, { attempt: 1 }, end(), final(), [step(runId, 'a')])).toBe(false);
    expect(await stepsOf(runId)).toEqual([]);
    expect(
      await runsStore(testDb.db).finish(runId, { attempt: 2 }, end('failed'), final(), [step(runId, 'a', 'failed')]),
    ).toBe(true);
    expect(await store.findRun(testDb.db, runId)).toMatchObject({ status: 'failed', attempts: 2 });
    expect(await stepsOf(runId)).toEqual([['a', 'failed', false]]);
    expect(await eventsOf(runId)).toEqual(['1 run.status', '2 run.finished']);
  });

  it('a step the store refuses fails the whole end: the run, its steps and its events stay as they were', async () => {
    const runId = await storedRunOf('running', 1);
    const refused = { ...step(runId, 'b'), status: 'x'.repeat(17) }; // the column holds 16
    await expect(
      runsStore(testDb.db).finish(runId, { attempt: 1 }, end(), final(), [step(runId, 'a'), refused]),
    ).rejects.toThrow();
    expect(await store.findRun(testDb.db, runId)).toMatchObject({ status: 'running', finished_at: null });
    expect(await stepsOf(runId)).toEqual([]);
    expect(await eventsOf(runId)).toEqual([]);
    // The same end without the refused step goes through.
    expect(await runsStore(testDb.db).finish(runId, { attempt: 1 }, end(), final(), [step(runId, 'a')])).toBe(true);
  });

  // MySQL only (registered on MySQL alone, so that PostgreSQL runs count no skipped test).
  if (dialect === 'mysql')
    it("on MySQL the end is one multi-statement query, outside knex's pool (which refuses them)", async () => {
      const runId = await storedRunOf('queued', 0);
      const knexQueries: string[] = [];
      const listen = (q: { sql: string }) => knexQueries.push(q.sql);
      testDb.db.on('query', listen);
      try {
        expect(
          await runsStore(testDb.db).finish(runId, { attempt: 1, startedAt: 1_100 }, end(), final(), [
            step(runId, 'a'),
          ]),
        ).toBe(true);
      } finally {
        testDb.db.off('query', listen);
      }
      expect(knexQueries).toEqual([]);
      expect(await eventsOf(runId)).toEqual(['1 run.status', '2 run.finished']);
      await expect(testDb.db.raw('SELECT 1; SELECT 2')).rejects.toMatchObject({ code: 'ER_PARSE_ERROR' });
    });
});
