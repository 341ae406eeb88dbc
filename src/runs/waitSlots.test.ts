// Held `Prefer: wait` requests are bounded per API key (WAITS_PER_KEY) and per user
// (WAITS_PER_USER) on each API process (waitSlots.ts): past a bound the wait is declined and the
// request answered at once as without it (202 with Location, no Preference-Applied), while other
// keys and users keep waiting. Real HTTP server, store and queue; the fake provider holds runs
// unfinished until the test releases them, so nothing depends on timing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI, replyGate } from '../../test/support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { WaitSlots } from './waitSlots.ts';

describe('WaitSlots', () => {
  it('counts per key and per user, declines past either, and frees a slot once', () => {
    const slots = new WaitSlots({ perKey: 1, perUser: 2 });
    const a = slots.tryTake(1, 10)!;
    expect(a).toBeTypeOf('function');
    expect(slots.tryTake(1, 10)).toBeUndefined(); // key 1 is at its bound
    const b = slots.tryTake(2, 10)!; // another key of the same user
    expect(slots.tryTake(3, 10)).toBeUndefined(); // the user is at theirs
    expect(slots.tryTake(undefined, 10)).toBeUndefined(); // a trigger URL's wait counts for the user too
    expect(slots.tryTake(4, 11)).toBeTypeOf('function'); // another user is not held back
    a();
    a(); // a second release frees nothing more
    expect(slots.size).toBe(2);
    expect(slots.tryTake(1, 10)).toBeTypeOf('function');
    b();
    expect(new WaitSlots({ perKey: 0, perUser: 0 }).tryTake(1, 1)).toBeUndefined(); // 0: waits are never honoured
  });
});

describe('Prefer: wait past WAITS_PER_KEY and WAITS_PER_USER', () => {
  let server: TestServer;
  let fake: FakeOpenAI;
  const { held, release } = replyGate();

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.answer = (request) =>
      request.messages.some((m) => m.content.includes('HOLD'))
        ? { kind: 'completion', content: 'held', until: held }
        : { kind: 'completion', content: 'done' };
    server = await startTestServer({
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, WAITS_PER_KEY: '1', WAITS_PER_USER: '2' },
    });
  });
  afterAll(async () => {
    release();
    await server?.close();
    await fake?.close();
  });

  async function keysOf(login: string, count: number): Promise<ApiClient[]> {
    const user = await createUser(server.ctx, { login, password: 'correct horse battery' });
    const keys: ApiClient[] = [];
    for (let i = 0; i < count; i++) {
      const { token } = await createAccessToken(server.ctx, {
        userId: user.id,
        namespace: login,
        name: `waits ${i}`,
        usageScenario: 'paid',
        permissions: ['workflows'],
      });
      keys.push(createApiClient(server.baseUrl, { bearer: token }));
    }
    return keys;
  }
  const start = (client: ApiClient, workflowId: string, ticket: string) =>
    client.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=60' } },
      body: { inputs: { ticket } },
    });
  /** Until the server holds `n` waits (a state, read as often as it takes: no timing assumed). */
  async function waitsHeld(n: number): Promise<void> {
    while (server.ctx.runs!.waits.size !== n) await new Promise((r) => setImmediate(r));
  }

  it('answers a wait past the bound at once, as without one, and keeps the others waiting', async () => {
    const [key1, key2, key3] = await keysOf('waits-alice', 3);
    const [bob] = await keysOf('waits-bob', 1);
    const { data: created } = await key1!.POST('/api/workflows', {
      body: { name: 'Held', ...seedGraph('fake-model') },
    });
    const workflowId = created!.data.id;
    const { data: bobCreated } = await bob!.POST('/api/workflows', {
      body: { name: 'Quick', ...seedGraph('fake-model') },
    });

    const first = start(key1!, workflowId, 'HOLD 1'); // held: key1's one wait
    await waitsHeld(1);
    const declined = await start(key1!, workflowId, 'HOLD 2');
    expect(declined.response.status).toBe(202);
    expect(declined.response.headers.get('location')).toBe(
      `/api/workflows/${workflowId}/runs/${declined.data!.data.id}`,
    );
    expect(declined.response.headers.get('preference-applied')).toBeNull();
    // A read of a run with the same key is declined too: 200 with the run as it is now.
    const read = await key1!.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: declined.data!.data.id }, header: { Prefer: 'wait=60' } },
    });
    expect(read.response.status).toBe(200);
    expect(read.response.headers.get('preference-applied')).toBeNull();
    expect(['queued', 'running']).toContain(read.data!.data.status);

    const second = start(key2!, workflowId, 'HOLD 3'); // another key of alice's: her second wait
    await waitsHeld(2);
    const overUser = await start(key3!, workflowId, 'HOLD 4'); // a third key, but alice is at WAITS_PER_USER
    expect(overUser.response.status).toBe(202);
    expect(overUser.response.headers.get('preference-applied')).toBeNull();

    // Bob's wait is his own: honoured, and answered with his ended run.
    const bobs = await start(bob!, bobCreated!.data.id, 'quick');
    expect(bobs.response.status).toBe(200);
    expect(bobs.response.headers.get('preference-applied')).toBe('wait=60');
    expect(bobs.data!.data.status).toBe('completed');

    release();
    for (const held of [await first, await second]) {
      expect(held.response.status).toBe(200);
      expect(held.response.headers.get('preference-applied')).toBe('wait=60');
      expect(held.data!.data.status).toBe('completed');
    }
    await waitsHeld(0); // every slot freed
  });
});

describe('WaitSlots.drain (the process stops)', () => {
  it('aborts the drain signal every held wait follows, and declines every wait after it', () => {
    const slots = new WaitSlots({ perKey: 5, perUser: 5 });
    const release = slots.tryTake(1, 1);
    expect(release).toBeDefined();
    expect(slots.drained.aborted).toBe(false);
    slots.drain();
    expect(slots.drained.aborted).toBe(true);
    expect(slots.tryTake(2, 2)).toBeUndefined();
    release!();
    expect(slots.size).toBe(0);
  });
});
