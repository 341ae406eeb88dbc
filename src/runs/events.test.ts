// How a run's events are numbered when writers meet, against the real store (PostgreSQL; MySQL
// too when TEST_MYSQL_URL is set): the worker numbers its own events without a locking read, so a
// number another writer took first must make it read the last number and go on after it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { runOwner, storedRun } from '../../test/support/storedRuns.ts';
import { appendRunEvents, appendRunEventsAfter, listRunEventsAfter } from './events.ts';
import { runsStore } from './runsStore.ts';
import * as store from './store.ts';

describe.each(testDialects())('run event numbering on %s', (dialect) => {
  let testDb: TestDb;
  let owner: { userId: number; workflowId: string };

  beforeAll(async () => {
    testDb = await createTestDb(dialect);
    owner = await runOwner(testDb.db, 'Numbered');
  });
  afterAll(async () => {
    await testDb?.destroy();
  });

  const runningRun = () => storedRun(testDb.db, owner, 'running', 1);

  const numbered = async (runId: string) =>
    (await listRunEventsAfter(testDb.db, runId, 0, 100)).map((e) => `${e.seq} ${e.type}`);

  it('a worker that guessed the last number wrong reads it and writes after the events already there', async () => {
    const runId = await runningRun();
    await appendRunEvents(testDb.db, runId, [{ type: 'run.status', data: { status: 'running' } }], Date.now());
    const last = await appendRunEventsAfter(
      testDb.db,
      runId,
      0,
      [
        { type: 'node.started', data: { node_id: 'a' } },
        { type: 'node.finished', data: { node_id: 'a' } },
      ],
      Date.now(),
    );
    expect(last).toBe(3);
    expect(await numbered(runId)).toEqual(['1 run.status', '2 node.started', '3 node.finished']);
    // Right guess: one insert after it.
    expect(
      await appendRunEventsAfter(testDb.db, runId, 3, [{ type: 'node.started', data: { node_id: 'b' } }], Date.now()),
    ).toBe(4);
  });

  it("a run's end writes the worker's last events in its transaction, after any number taken meanwhile; a superseded attempt writes none", async () => {
    const runId = await runningRun();
    await appendRunEvents(
      testDb.db,
      runId,
      [
        { type: 'run.status', data: { status: 'running' } },
        { type: 'node.started', data: {} },
      ],
      Date.now(),
    );
    const end = {
      status: 'completed' as const,
      output: '{}',
      error: null,
      usage: null,
      finished_at: Date.now(),
      duration_ms: 1,
    };
    const final = {
      events: [
        { type: 'node.finished' as const, data: {} },
        { type: 'run.finished' as const, data: {} },
      ],
      after: 1,
    }; // stale: 2 exists
    expect(await runsStore(testDb.db).finish(runId, { attempt: 2 }, end, final)).toBe(false); // attempt 2 does not hold it
    expect(await numbered(runId)).toEqual(['1 run.status', '2 node.started']);
    expect(await runsStore(testDb.db).finish(runId, { attempt: 1 }, end, final)).toBe(true);
    expect(await numbered(runId)).toEqual(['1 run.status', '2 node.started', '3 node.finished', '4 run.finished']);
    expect((await store.findRun(testDb.db, runId))!.status).toBe('completed');
  });
});
