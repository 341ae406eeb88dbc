// Schedule timing as README documents it: a tick stays due for 60 s (pg-boss's window) and one
// process a pass looks for due ticks every SCHEDULE_CHECK_INTERVAL_SECONDS (10 by default), so a
// schedule created up to 60 - SCHEDULE_CHECK_INTERVAL_SECONDS seconds after a tick fires that tick
// at the next pass. A schedule created 43 s after a tick did not fire it with the former 30 s
// default whenever the next pass fell after the window. Wall-clock minutes are the cron's own, so
// the test waits for the right second of a minute; nothing here asserts a speed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { shortestRetrySpanSeconds } from '../../src/hooks/deliveries.ts';
import { SCHEDULE_QUEUE, TICK_RETRY } from '../../src/runs/scheduleQueue.ts';
import { apiKeyFor, bearer, createWorkflow, sleep, waitFor } from './support/fixtures.ts';

const MINUTE = 60_000;

describe('a schedule created 43 s after a tick (default SCHEDULE_CHECK_INTERVAL_SECONDS)', () => {
  let server: TestServer;
  let apiKey: string;

  beforeAll(async () => {
    server = await startTestServer({ runs: true });
    apiKey = (await apiKeyFor(server.ctx.db)).token;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it(
    'fires the tick it was created after, then the next one: two runs before the tick after next',
    { timeout: 300_000 },
    async () => {
      expect(server.ctx.config.SCHEDULE_CHECK_INTERVAL_SECONDS).toBe(10);
      const workflowId = await createWorkflow(server.baseUrl, apiKey, 'echo');
      // Created 43 s after a minute's tick (the case of the report).
      while (Math.floor((Date.now() % MINUTE) / 1000) !== 43) await sleep(200);
      const tick = Math.floor(Date.now() / MINUTE) * MINUTE;
      const created = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/schedules`, {
        method: 'POST',
        headers: bearer(apiKey, { 'content-type': 'application/json' }),
        body: JSON.stringify({ cron: '* * * * *', inputs: { ticket: 'tick' } }),
      });
      expect(created.status).toBe(201);
      const runs = async () =>
        (
          (await (
            await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs`, { headers: bearer(apiKey) })
          ).json()) as { data: { created_at: string }[] }
        ).data.map((r) => Date.parse(r.created_at));
      // The tick it was created after, and the next minute's: both, however late the second comes.
      await waitFor('two ticks fired', async () => (await runs()).length >= 2, 180_000);
      const times = (await runs()).sort((a, b) => a - b);
      // Two runs before the tick after next: the tick of minute `tick` fired (without it, the first
      // run would be the next minute's tick and the second the one after).
      expect(times[0]!).toBeGreaterThan(tick);
      expect(times[1]!).toBeLessThan(tick + 2 * MINUTE);
    },
  );

  it('retries a tick that met a store outage at most 10 s apart, for over two minutes, on the queue as pg-boss keeps it', async () => {
    const queue = await server.ctx.runs!.queue.boss.getQueue(SCHEDULE_QUEUE);
    expect(queue).toMatchObject({
      retryLimit: TICK_RETRY.retryLimit,
      retryDelay: 5,
      retryBackoff: true,
      retryDelayMax: 10,
    });
    expect(shortestRetrySpanSeconds(TICK_RETRY)).toBeGreaterThanOrEqual(120);
  });
});
