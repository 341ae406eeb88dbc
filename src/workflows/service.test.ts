// Service rules on a real database, each dialect the run has (embedded PostgreSQL; MySQL when
// TEST_MYSQL_URL is set). HTTP-level behaviour is in router.test.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Problem } from '../shared/errors.ts';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { insertReturningId } from '../db/insert.ts';
import * as service from './service.ts';
import type { WorkflowContext } from './service.ts';
import { loadConfig } from '../config.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';

const graph = seedGraph();

async function rejection(promise: Promise<unknown>): Promise<Problem> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Problem);
  return err as Problem;
}

/** The context with DELETED_WORKFLOW_RETENTION_SECONDS set. */
const withRetention = (ctx: WorkflowContext, seconds: number): WorkflowContext => ({
  ...ctx,
  config: { ...ctx.config, DELETED_WORKFLOW_RETENTION_SECONDS: seconds },
});

describe.each(testDialects())('workflows service on %s', (dialect) => {
  let testDb: TestDb;
  let ctx: WorkflowContext;
  let alice: number;
  let bob: number;

  beforeAll(async () => {
    testDb = await createTestDb(dialect);
    ctx = { db: testDb.db, config: loadConfig({ WORKFLOW_MAX_TOKENS_LIMIT: '4096' }), now: Date.now };
    const user = (login: string) =>
      insertReturningId(testDb.db, 'users', { login, name: login, password_hash: 'x', created_at: Date.now() });
    alice = await user('alice');
    bob = await user('bob');
  });
  afterAll(async () => {
    await testDb?.destroy();
  });

  it('stores a workflow and reads it back unchanged', async () => {
    const created = await service.createWorkflow(ctx, alice, {
      name: 'Ticket summariser',
      description: 'One line.',
      ...graph,
    });
    expect(created.id).toMatch(/^wf_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(created.version).toBe(1);
    expect(await service.getWorkflow(ctx, alice, created.id)).toEqual(created);
  });

  it('defaults description to empty, and refuses a workflow without nodes (422): it could never run', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Plain', ...graph });
    expect(created).toMatchObject({ description: '' });
    const problem = await rejection(service.createWorkflow(ctx, alice, { name: 'Empty' }));
    expect(problem.status).toBe(422);
    expect(problem.errors).toEqual([{ pointer: '/nodes', message: expect.stringMatching(/at least one node/) }]);
  });

  it("hides one user's workflow from another (404, as if it did not exist)", async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Private', ...graph });
    expect((await rejection(service.getWorkflow(ctx, bob, created.id))).status).toBe(404);
    expect((await rejection(service.updateWorkflow(ctx, bob, created.id, { name: 'x' }, undefined))).status).toBe(404);
    expect((await rejection(service.deleteWorkflow(ctx, bob, created.id))).status).toBe(404);
  });

  it('validates a partial graph update against the stored other half', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Half', ...graph });
    const problem = await rejection(
      service.updateWorkflow(ctx, alice, created.id, { nodes: graph.nodes.slice(0, 2) }, undefined),
    );
    expect(problem.status).toBe(422);
    expect(problem.errors).toEqual([{ pointer: '/edges/1', message: 'edge refers to unknown node "result"' }]);
  });

  it('bumps the version on every update and refuses a stale If-Match with 412 (RFC 9110 13.1.1)', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Versioned', ...graph });
    const renamed = await service.updateWorkflow(ctx, alice, created.id, { name: 'Renamed' }, '"1"');
    expect(renamed.version).toBe(2);
    const stale = await rejection(service.updateWorkflow(ctx, alice, created.id, { name: 'Again' }, '"1"'));
    expect(stale.status).toBe(412);
    expect(stale.message).toBe('The workflow is at version 2, not 1.');
    expect((await service.updateWorkflow(ctx, alice, created.id, { description: 'd' }, '2')).version).toBe(3);
    expect((await service.updateWorkflow(ctx, alice, created.id, { description: 'e' }, '*')).version).toBe(4);
  });

  it('lets exactly one of many concurrent updates from the same version win', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Race', ...graph });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        service.updateWorkflow(ctx, alice, created.id, { name: `Writer ${i}` }, '"1"'),
      ),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.every((r) => (r.reason as Problem).status === 412)).toBe(true);
    expect((await service.getWorkflow(ctx, alice, created.id)).version).toBe(2);
  });

  it('applies every concurrent update without If-Match, none lost', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Many writers', ...graph });
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        service.updateWorkflow(ctx, alice, created.id, { description: `d${i}` }, undefined),
      ),
    );
    expect((await service.getWorkflow(ctx, alice, created.id)).version).toBe(6);
  });

  it('soft-deletes: the workflow is gone for reads, updates and a second delete, but its row stays', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Doomed', ...graph });
    await service.deleteWorkflow(ctx, alice, created.id);
    expect((await rejection(service.getWorkflow(ctx, alice, created.id))).status).toBe(404);
    expect((await rejection(service.updateWorkflow(ctx, alice, created.id, { name: 'x' }, undefined))).status).toBe(
      404,
    );
    expect((await rejection(service.deleteWorkflow(ctx, alice, created.id))).status).toBe(404);
    const row = (await testDb.db('workflows').where({ id: created.id }).first()) as { deleted_at: unknown };
    expect(Number(row.deleted_at)).toBeGreaterThan(0);
  });

  it('hides a deleted workflow from the run endpoints at once with the default retention of 0', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Gone', ...graph });
    await service.deleteWorkflow(ctx, alice, created.id);
    expect((await rejection(service.findWorkflowForRuns(withRetention(ctx, 0), alice, created.id))).status).toBe(404);
  });

  it('keeps a deleted workflow visible to the run endpoints during the retention period, then purges it', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Archived', ...graph });
    await service.deleteWorkflow(ctx, alice, created.id);
    const retaining = withRetention(ctx, 30);
    expect(await service.findWorkflowForRuns(retaining, alice, created.id)).toEqual({
      workflow: created,
      deleted: true,
    });
    expect(
      (
        await rejection(
          service.findWorkflowForRuns({ ...retaining, now: () => Date.now() + 60_000 }, alice, created.id),
        )
      ).status,
    ).toBe(404);
    expect((await rejection(service.findWorkflowForRuns(ctx, bob, created.id))).status).toBe(404);
    const later = { ...ctx, now: () => Date.now() + 60_000 };
    expect(await service.purgeDeletedWorkflows(later, 30_000)).toBeGreaterThanOrEqual(1);
    expect((await rejection(service.findWorkflowForRuns(retaining, alice, created.id))).status).toBe(404);
  });

  /** The store's driver, whose connections the reads take (prepared statements emit no 'query' event). */
  const driver = () =>
    testDb.db.client as {
      acquireConnection(): Promise<unknown>;
      releaseConnection(connection: unknown): Promise<void>;
    };

  it('concurrent reads of one workflow for the run endpoints (each run start makes one) share a statement', async () => {
    const created = await service.createWorkflow(ctx, alice, { name: 'Busy', ...graph });
    const acquire = vi.spyOn(driver(), 'acquireConnection');
    try {
      const [alices, bobs] = await Promise.all([
        Promise.all(Array.from({ length: 6 }, () => service.findWorkflowForRuns(ctx, alice, created.id))),
        rejection(service.findWorkflowForRuns(ctx, bob, created.id)),
      ]);
      // Alice's first read went alone, and the five asked for while it was under way went together;
      // Bob's (another user, so another key) went on its own, and found nothing.
      expect(acquire).toHaveBeenCalledTimes(3);
      for (const found of alices) expect(found).toEqual({ workflow: created, deleted: false });
      expect(alices[0]!.workflow).not.toBe(alices[1]!.workflow); // each caller its own copy
      expect(bobs.status).toBe(404);
    } finally {
      acquire.mockRestore();
    }
  });

  it.each(['updated', 'deleted'] as const)(
    "a run endpoint's read asked for while another is under way sees the workflow as %s before it was asked for",
    async (change) => {
      const created = await service.createWorkflow(ctx, alice, { name: 'Before', ...graph });
      // The first read's connection goes back to the pool only when the gate opens: its row (read
      // before the change) stays under way while the change commits and the second read is asked for.
      const pool = driver();
      const release = pool.releaseConnection.bind(pool);
      let readDone!: () => void;
      const firstRead = new Promise<void>((resolve) => (readDone = resolve));
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const held = vi.spyOn(pool, 'releaseConnection').mockImplementationOnce(async (connection) => {
        readDone();
        await gate;
        return release(connection);
      });
      try {
        const first = service.findWorkflowForRuns(ctx, alice, created.id);
        await firstRead;
        if (change === 'updated') await service.updateWorkflow(ctx, alice, created.id, { name: 'After' }, undefined);
        else await service.deleteWorkflow(ctx, alice, created.id);
        const second = service.findWorkflowForRuns(ctx, alice, created.id).catch((err: unknown) => err);
        openGate();
        expect((await first).workflow.name).toBe('Before');
        const seen = await second;
        if (change === 'updated')
          expect((seen as { workflow: { name: string; version: number } }).workflow).toMatchObject({
            name: 'After',
            version: 2,
          });
        else expect((seen as Problem).status).toBe(404);
      } finally {
        openGate();
        held.mockRestore();
      }
    },
  );

  it('purges only workflows deleted longer ago than the retention', async () => {
    const kept = await service.createWorkflow(ctx, alice, { name: 'Recently deleted', ...graph });
    await service.deleteWorkflow(ctx, alice, kept.id);
    const live = await service.createWorkflow(ctx, alice, { name: 'Live', ...graph });
    await service.purgeDeletedWorkflows(ctx, 3_600_000);
    expect((await service.findWorkflowForRuns(withRetention(ctx, 3600), alice, kept.id)).deleted).toBe(true);
    expect((await service.findWorkflowForRuns(ctx, alice, live.id)).deleted).toBe(false);
  });

  it('searches names case-insensitively with %, _ and ! taken literally', async () => {
    const names = [
      '100% Done',
      '100 percent Done',
      'snake_case',
      'snakeXcase',
      'Wow! Such',
      'Wow Such',
      'back\\slash',
      'ÄRGER',
    ];
    const carol = await insertReturningId(testDb.db, 'users', {
      login: 'carol',
      name: 'carol',
      password_hash: 'x',
      created_at: Date.now(),
    });
    for (const name of names) await service.createWorkflow(ctx, carol, { name, ...graph });
    const find = async (search: string) =>
      (await service.listWorkflows(ctx, carol, { page: 1, perPage: 100, search })).data.map((w) => w.name);
    expect(await find('0% d')).toEqual(['100% Done']);
    expect(await find('E_C')).toEqual(['snake_case']);
    expect(await find('w! s')).toEqual(['Wow! Such']);
    expect(await find('K\\S')).toEqual(['back\\slash']);
    expect(await find('ärg')).toEqual(['ÄRGER']);
    expect(await find('%')).toEqual(['100% Done']);
    expect(await find('_')).toEqual(['snake_case']);
  });

  it('pages newest first with totals', async () => {
    const dave = await insertReturningId(testDb.db, 'users', {
      login: 'dave',
      name: 'dave',
      password_hash: 'x',
      created_at: Date.now(),
    });
    for (let i = 1; i <= 5; i++) await service.createWorkflow(ctx, dave, { name: `W${i}`, ...graph });
    const page2 = await service.listWorkflows(ctx, dave, { page: 2, perPage: 2 });
    expect(page2.data.map((w) => w.name)).toEqual(['W3', 'W2']);
    expect(page2.meta).toEqual({ page: 2, per_page: 2, total: 5, total_pages: 3 });
    const beyond = await service.listWorkflows(ctx, dave, { page: 9, perPage: 2 });
    expect(beyond.data).toEqual([]);
    expect(beyond.meta.total).toBe(5);
  });
});

describe('parseIfMatch', () => {
  it('accepts a strong ETag, a bare version, a list and *', () => {
    expect(service.parseIfMatch('"3"')).toEqual([3]);
    expect(service.parseIfMatch('3')).toEqual([3]);
    expect(service.parseIfMatch('"3", "4"')).toEqual([3, 4]);
    expect(service.parseIfMatch('*')).toBeNull();
    expect(service.parseIfMatch(undefined)).toBeUndefined();
  });

  it('takes a weak tag as matching nothing (a 412): If-Match compares strongly (RFC 9110 13.1.1)', () => {
    expect(service.parseIfMatch('W/"3"')).toEqual([]);
    expect(service.parseIfMatch('W/"3", "4"')).toEqual([4]);
  });

  it('refuses anything else with 400 rather than matching nothing', () => {
    expect(() => service.parseIfMatch('"abc"')).toThrow(Problem);
    expect(() => service.parseIfMatch('"abc"')).toThrow(/If-Match/);
  });
});

describe('foldCase', () => {
  it('keeps the length of the name, so name_lower always fits its column', () => {
    expect(service.foldCase('İstanbul ÄÖ')).toBe('İstanbul äö');
    expect([...service.foldCase('İ'.repeat(200))]).toHaveLength(200);
  });
});
