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
