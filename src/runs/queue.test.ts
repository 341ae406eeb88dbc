// The run queue's announcements on a real PostgreSQL: concurrent ones share a NOTIFY statement, and
// each still reaches a listener on another connection as a notice of its own.
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDb, type TestDb } from '../../test/support/db.ts';
import { JOB_CHANNEL, RUN_QUEUE, startRunQueue, type RunQueue } from './queue.ts';
import { QueueDb } from './queueDb.ts';

describe('run queue announcements (NOTIFY)', () => {
  let testDb: TestDb;
  let queue: RunQueue;
  let listener: pg.Client;
  const heard: Array<{ channel: string; payload: string | undefined }> = [];

  beforeAll(async () => {
    testDb = await createTestDb('pg', { migrate: false });
    queue = await startRunQueue({ url: testDb.url, logger: pino({ level: 'silent' }), runTimeoutSeconds: 60 });
    // Another process's listener: a connection of its own.
    listener = new pg.Client({ connectionString: testDb.url });
    await listener.connect();
    listener.on('notification', ({ channel, payload }) => heard.push({ channel, payload }));
    await listener.query('LISTEN workflow_run_ended');
    await listener.query('LISTEN workflow_run_events');
    await listener.query(`LISTEN ${JOB_CHANNEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await queue?.stop();
    await testDb?.destroy();
  });

  /** `announce` for each run id at once: the NOTIFY statements it took, once the listener heard every id. */
  async function announceTogether(
    ids: string[],
    announce: (id: string) => Promise<void>,
    channel: string,
  ): Promise<number> {
    const executeSql = vi.spyOn(QueueDb.prototype, 'executeSql');
    try {
      await Promise.all(ids.map(announce));
      await vi.waitFor(() =>
        expect(heard.filter((h) => h.channel === channel && ids.includes(h.payload!)).map((h) => h.payload)).toEqual(
          ids,
        ),
      );
      return executeSql.mock.calls.filter(([sql]) => sql.includes('pg_notify')).length;
    } finally {
      executeSql.mockRestore();
    }
  }

  it('run ends announced while one is under way go together in the next statement, one notice per run, in order', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `run_ended_${i}`);
    // The first went alone; the five announced while it was under way, together.
    expect(await announceTogether(ids, (id) => queue.announceRunEnded(id), 'workflow_run_ended')).toBe(2);
  });

  it('so do stored events, on their own channel', async () => {
    const ids = Array.from({ length: 4 }, (_, i) => `run_events_${i}`);
    expect(await announceTogether(ids, (id) => queue.announceRunEvents(id), 'workflow_run_events')).toBe(2);
  });

  it('a run end and stored events announced at once each go on their channel', async () => {
    heard.length = 0;
    await Promise.all([queue.announceRunEnded('run_both'), queue.announceRunEvents('run_both')]);
    await vi.waitFor(() => expect(heard).toHaveLength(2));
    expect(heard).toEqual(
      expect.arrayContaining([
        { channel: 'workflow_run_ended', payload: 'run_both' },
        { channel: 'workflow_run_events', payload: 'run_both' },
      ]),
    );
  });

  it("a new job NOTIFYs on the channel the queue listens on to wake one worker (pg-boss's, named by us as pg-boss names it)", async () => {
    await queue.enqueue('run_job_notice');
    await vi.waitFor(() => expect(heard).toContainEqual({ channel: JOB_CHANNEL, payload: RUN_QUEUE }));
  });
});

describe('run queue workers (a wake per new job)', () => {
  let testDb: TestDb;
  let queue: RunQueue;
  const held: Array<() => void> = [];

  beforeAll(async () => {
    testDb = await createTestDb('pg', { migrate: false });
    queue = await startRunQueue({ url: testDb.url, logger: pino({ level: 'silent' }), runTimeoutSeconds: 60 });
  });
  afterAll(async () => {
    for (const release of held) release();
    await queue?.stop();
    await testDb?.destroy();
  });

  it('never wakes twice a worker not yet back from the fetch it was woken for: the next job wakes another', async () => {
    const started: string[] = [];
    await queue.work(
      async (runId) => {
        started.push(runId);
        await new Promise<void>((resolve) => held.push(resolve));
      },
      { concurrency: 2 },
    );
    await queue.enqueue('run_first');
    await vi.waitFor(() => expect(started).toEqual(['run_first']));
    const busy = queue.boss.getWipData().find((w) => w.name === RUN_QUEUE && w.count > 0)!.id;
    const woken = vi.spyOn(queue.boss, 'notifyWorker');
    try {
      // Two jobs at once, one worker idle: woken for the first, it shows no job until its fetch
      // returns; woken again for the second, it would take that one only after the first's whole
      // run. The busy worker is woken instead, and takes it as soon as its own job ends.
      await Promise.all([queue.enqueue('run_second'), queue.enqueue('run_third')]);
      await vi.waitFor(() => expect(started).toHaveLength(2));
      await vi.waitFor(() => expect(woken).toHaveBeenCalledTimes(2));
      const ids = woken.mock.calls.map(([id]) => id);
      expect(ids[0]).not.toBe(busy);
      expect(ids[1]).toBe(busy);
      held.shift()!(); // the first job ends: its worker fetches the third at once
      await vi.waitFor(() => expect([...started].sort()).toEqual(['run_first', 'run_second', 'run_third']));
    } finally {
      woken.mockRestore();
    }
  });
});
