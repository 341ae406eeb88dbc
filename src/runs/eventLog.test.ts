// A run's event stream as the worker writes it (eventLog.ts), against the real store (PostgreSQL;
// MySQL too when TEST_MYSQL_URL is set): the steps inside a map's items send no events (the map's
// node.progress does), and the stream stops at RUN_MAX_EVENTS, counting the events an earlier
// attempt of a run taken over stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { runOwner, storedRun } from '../../test/support/storedRuns.ts';
import { EventLog } from './eventLog.ts';
import { appendRunEvents, listRunEventsAfter } from './events.ts';
import { runsStore } from './runsStore.ts';

describe.each(testDialects())('run event log bounds on %s', (dialect) => {
  let testDb: TestDb;
  let owner: { userId: number; workflowId: string };

  beforeAll(async () => {
    testDb = await createTestDb(dialect);
    owner = await runOwner(testDb.db, 'Bounded');
  });
  afterAll(async () => {
    await testDb?.destroy();
  });

  const stored = async (runId: string) =>
    (await listRunEventsAfter(testDb.db, runId, 0, 1000)).map((e) =>
      `${e.type} ${(JSON.parse(e.data) as { node_id?: string }).node_id ?? ''}`.trim(),
    );
  const logOf = (runId: string, last: number | undefined, max = Infinity) => {
    const told = { exceeded: 0 };
    const log = new EventLog(
      runsStore(testDb.db),
      () => Date.now(),
      runId,
      (fn) => fn(),
      async () => true,
      () => {},
      last,
      { max, exceeded: () => void (told.exceeded += 1) },
    );
    return { log, told };
  };
  /** Closes the log and writes what is left, as the run's end does. */
  const closed = async (log: EventLog, runId: string) => {
    await log.close();
    const rest = log.rest();
    if (rest.events.length) await appendRunEvents(testDb.db, runId, rest.events, Date.now());
  };

  it("drops the events of steps inside a map's items, the inner maps' progress included; keeps the map's own", async () => {
    const runId = await storedRun(testDb.db, owner, 'running', 1);
    const { log } = logOf(runId, 0);
    log.add('run.status', { status: 'running' });
    log.add('node.started', { node_id: 'each', node_type: 'map' });
    log.add('node.progress', { node_id: 'each', node_type: 'map', total: 2, done: 0, failed: 0 });
    for (const i of [0, 1]) {
      log.add('node.started', { node_id: `each[${i}].shout`, node_type: 'llm_call' });
      log.add('node.delta', { node_id: `each[${i}].shout`, text: 'x' });
      log.add('node.progress', { node_id: `each[${i}].inner`, node_type: 'map', total: 5, done: 5, failed: 0 });
      log.add('node.finished', { node_id: `each[${i}].shout`, node_type: 'llm_call', status: 'completed' });
    }
    log.add('node.progress', { node_id: 'each', node_type: 'map', total: 2, done: 2, failed: 0 });
    log.add('node.finished', { node_id: 'each', node_type: 'map', status: 'completed' });
    await closed(log, runId);
    expect(await stored(runId)).toEqual([
      'run.status',
      'node.started each',
      'node.progress each',
      'node.progress each',
      'node.finished each',
    ]);
  });

  it('stores at most cap.max events and tells the cap once', async () => {
    const runId = await storedRun(testDb.db, owner, 'running', 1);
    const { log, told } = logOf(runId, 0, 5);
    for (let i = 0; i < 8; i++) log.add('node.started', { node_id: `n${i}`, node_type: 'template' });
    expect(told.exceeded).toBe(1);
    await closed(log, runId);
    expect(await stored(runId)).toEqual([
      'node.started n0',
      'node.started n1',
      'node.started n2',
      'node.started n3',
      'node.started n4',
    ]);
  });

  it('a run taken over counts the events its earlier attempts stored', async () => {
    const runId = await storedRun(testDb.db, owner, 'running', 2);
    await appendRunEvents(
      testDb.db,
      runId,
      Array.from({ length: 10 }, (_, i) => ({ type: 'node.started' as const, data: { node_id: `old${i}` } })),
      Date.now(),
    );
    const { log, told } = logOf(runId, undefined, 12); // a retry does not know the last number
    log.add('run.status', { status: 'running' });
    // Its first write learns that 10 came before it.
    await expect.poll(async () => (await stored(runId)).length, { timeout: 10_000 }).toBe(11);
    log.add('node.started', { node_id: 'a' });
    expect(told.exceeded).toBe(0);
    log.add('node.started', { node_id: 'b' });
    expect(told.exceeded).toBe(1);
    await closed(log, runId);
    expect((await stored(runId)).length).toBe(12);
  });
});
