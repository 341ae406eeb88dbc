// Event streams within bounds, through a real HTTP server, store and pg-boss queue:
// open streams are capped per API key and per user (429 with Retry-After and the documented
// problem body past it), and a run's new events are read once per process for all its streams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';

async function userWithKeys(ctx: AppContext, login: string, keys: number): Promise<string[]> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const tokens: string[] = [];
  for (let i = 0; i < keys; i++) {
    tokens.push(
      (
        await createAccessToken(ctx, {
          userId: user.id,
          namespace: login,
          name: `k${i}`,
          usageScenario: 'paid',
          permissions: ['workflows'],
        })
      ).token,
    );
  }
  return tokens;
}

const auth = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra });

async function startRun(
  baseUrl: string,
  token: string,
  model: string,
  ticket: string,
): Promise<{ workflowId: string; runId: string }> {
  const created = await fetch(`${baseUrl}/api/workflows`, {
    method: 'POST',
    headers: auth(token, { 'content-type': 'application/json' }),
    body: JSON.stringify({ name: `wf ${ticket}`, ...seedGraph(model) }),
  });
  const workflowId = ((await created.json()) as { data: { id: string } }).data.id;
  const started = await fetch(`${baseUrl}/api/workflows/${workflowId}/run`, {
    method: 'POST',
    headers: auth(token, { 'content-type': 'application/json' }),
    body: JSON.stringify({ inputs: { ticket } }),
  });
  return { workflowId, runId: ((await started.json()) as { data: { id: string } }).data.id };
}

describe.each(testDialects())('event streams within bounds on %s', (dialect) => {
  describe('the caps (no worker: the run stays queued and its streams open)', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({
        dialect,
        runs: { worker: false },
        env: { EVENT_STREAMS_PER_KEY: '2', EVENT_STREAMS_PER_USER: '3' },
      });
    });
    afterAll(async () => {
      await server?.close();
    });

    it('refuses a third stream of one key and a fourth of one user with 429 too_many_event_streams and Retry-After; a closed stream frees its slot', async () => {
      const [keyA, keyB] = await userWithKeys(server.ctx, 'streamer', 2);
      const [other] = await userWithKeys(server.ctx, 'bystander', 1);
      const { workflowId, runId } = await startRun(server.baseUrl, keyA!, 'echo', 'hold');
      const url = `${server.baseUrl}/api/workflows/${workflowId}/runs/${runId}/events`;
      const open = async (token: string) => {
        const controller = new AbortController();
        const res = await fetch(url, { headers: auth(token), signal: controller.signal });
        return { res, close: () => controller.abort() };
      };
      const a1 = await open(keyA!);
      const a2 = await open(keyA!);
      expect([a1.res.status, a2.res.status]).toEqual([200, 200]);
      const a3 = await open(keyA!);
      expect(a3.res.status).toBe(429);
      expect(a3.res.headers.get('retry-after')).toBe('5');
      expect(a3.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await a3.res.json()).toMatchObject({
        status: 429,
        code: 'too_many_event_streams',
        detail: expect.stringContaining('EVENT_STREAMS_PER_KEY'),
      });
      expect((await open(keyB!)).res.status).toBe(200); // the user's third
      const b2 = await open(keyB!);
      expect(b2.res.status).toBe(429);
      expect(await b2.res.json()).toMatchObject({
        code: 'too_many_event_streams',
        detail: expect.stringContaining('EVENT_STREAMS_PER_USER'),
      });
      // Another user's key is not bounded by this one's streams (their 404 comes after their slot).
      expect((await open(other!)).res.status).toBe(404);
      a1.close();
      await expect.poll(async () => (await open(keyB!)).res.status, { timeout: 5_000 }).toBe(200);
    });
  });

  describe('the shared reader', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({
        dialect,
        runs: true,
        env: { DEMO_MODELS: 'true', EVENT_STREAMS_PER_KEY: '100' },
      });
    });
    afterAll(async () => {
      await server?.close();
    });

    it("reads a run's new events once for all its streams: fewer reads of the run's events than streams, and every stream gets every event", async () => {
      const [key] = await userWithKeys(server.ctx, 'watcher', 1);
      const listeners = 20;
      const { workflowId, runId } = await startRun(
        server.baseUrl,
        key!,
        'echo-slow',
        'one two three four five six seven eight',
      );
      let reads = 0;
      const onQuery = (q: { sql: string }) => {
        if (/from [`"]run_events[`"]/i.test(q.sql) && /^select/i.test(q.sql.trim())) reads++;
      };
      server.ctx.db.on('query', onQuery);
      try {
        const bodies = await Promise.all(
          Array.from({ length: listeners }, async () => {
            const res = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs/${runId}/events`, {
              headers: auth(key!),
            });
            expect(res.status).toBe(200);
            return res.text();
          }),
        );
        const ids = (body: string) => [...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
        const first = ids(bodies[0]!);
        expect(first.length).toBeGreaterThan(8); // the node's deltas came over seconds, in several writes
        expect(first).toEqual(first.map((_, i) => i + 1));
        for (const body of bodies) {
          expect(ids(body)).toEqual(first);
          expect(body).toContain('event: run.finished');
        }
        // One read per stream and notice was listeners x writes (here 20 x 8 and more).
        expect(reads).toBeLessThan(listeners);
      } finally {
        server.ctx.db.off('query', onQuery);
      }
    });
  });
});
