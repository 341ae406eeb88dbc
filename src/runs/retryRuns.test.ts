// Retrying a failed run resumes it (retryRun), on a real HTTP server with a worker, store
// (PostgreSQL; MariaDB too with TEST_MYSQL_URL) and queue, against a local provider speaking
// OpenAI's wire format: the steps the run completed are reused (no provider call again), only the
// failed node and those after it run; `retry_of` and `reused_from` say so, and the stream has
// `run.reused`. Only a failed or cancelled run of one's own is retried; another version reuses
// only what it did not change; an Idempotency-Key answers the same retry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { replyGate, startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { createTestDb, testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient, workflowsUser } from '../../test/support/workflowUsers.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

const llm = (id: string, systemPrompt: string) =>
  ({
    id,
    type: 'llm_call',
    config: { model: 'llama-3', system_prompt: systemPrompt, retry: { max_attempts: 1 } },
  }) as Node;
/** in -> first -> second -> third -> result: three provider calls in a row. */
const chain = (secondPrompt = 'second'): { nodes: Node[]; edges: Edge[] } => ({
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    llm('first', 'first'),
    llm('second', secondPrompt),
    llm('third', 'third'),
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'first' },
    { from: 'first', to: 'second' },
    { from: 'second', to: 'third' },
    { from: 'third', to: 'result' },
  ],
});

describe.each(testDialects())('retrying runs on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;
  /** The provider answers the third node with a 500 while this is true. */
  let thirdFails = true;
  /** Answers of the first node wait for this while set (a run held running). */
  let firstHeld: Promise<void> | undefined;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.answer = (request) => {
      const system = request.messages.find((m) => m.role === 'system')?.content ?? '';
      const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
      if (system === 'third' && thirdFails) return { kind: 'error', status: 500, message: 'The server had an error.' };
      if (system === 'first' && firstHeld) return { kind: 'completion', content: `first(${user})`, until: firstHeld };
      return { kind: 'completion', content: `${system}(${user})` };
    };
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
    bob = await workflowsClient(server.ctx, server.baseUrl, 'bob');
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  async function create(): Promise<string> {
    const { data, error } = await alice.POST('/api/workflows', { body: { name: 'chain', ...chain() } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }

  /** A run of the chain that failed at its third node (the provider answered 500). */
  async function failedRun(workflowId: string) {
    thirdFails = true;
    const { data, error } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=30' } },
      body: { inputs: { ticket: 'Charged twice' } },
    });
    if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
    expect(data.data.status).toBe('failed');
    expect(data.data.error?.node_id).toBe('third');
    return data.data;
  }

  const retry = (
    workflowId: string,
    runId: string,
    options: { client?: ApiClient; key?: string; version?: number; wait?: boolean } = {},
  ) =>
    (options.client ?? alice).POST('/api/workflows/{workflow_id}/runs/{run_id}/retry', {
      params: {
        path: { workflow_id: workflowId, run_id: runId },
        header: {
          ...(options.wait === false ? {} : { Prefer: 'wait=30' }),
          ...(options.key ? { 'Idempotency-Key': options.key } : {}),
        },
      },
      body: options.version === undefined ? {} : { version: options.version },
    });

  const callsOf = (system: string) =>
    fake.requests.filter((r) => r.messages.some((m) => m.role === 'system' && m.content === system)).length;

  it('reuses the completed steps: the provider is called for the failed node only, and the output is whole', async () => {
    const workflowId = await create();
    const failed = await failedRun(workflowId);
    const [first, second, third] = ['first', 'second', 'third'].map(callsOf);
    thirdFails = false;
    const { data, error, response } = await retry(workflowId, failed.id);
    if (!data) throw new Error(`retry failed: ${JSON.stringify(error)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('location')).toBe(`/api/workflows/${workflowId}/runs/${data.data.id}`);
    const run = data.data;
    expect(run.id).not.toBe(failed.id);
    expect(run.status).toBe('completed');
    expect(run.retry_of).toBe(failed.id);
    expect(run.workflow_version).toBe(failed.workflow_version);
    expect(run.output).toEqual({ result: 'third(second(first(Charged twice)))' });
    expect([callsOf('first'), callsOf('second'), callsOf('third')]).toEqual([first, second, third! + 1]);
    const step = (id: string) => run.logs.find((s) => s.node_id === id)!;
    for (const id of ['in', 'first', 'second']) {
      expect(step(id).status).toBe('completed');
      expect(step(id).reused_from).toBe(failed.id);
      expect(step(id).output).toBe(failed.logs.find((s) => s.node_id === id)!.output);
    }
    expect(step('third').reused_from).toBeUndefined();
    expect(step('third').output).toBe('third(second(first(Charged twice)))');
    // The run's usage is what it spent: the third call's only (the fake counts each call alike).
    expect(run.usage.total_tokens).toBe(step('third').usage!.total_tokens);
    // The stream tells which nodes were reused, then each one's end, then the rest of the run.
    const events = (await server.ctx
      .db('run_events')
      .where({ run_id: run.id })
      .orderBy('seq')
      .select('type', 'data')) as { type: string; data: string }[];
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(['run.status', 'run.reused']);
    expect(JSON.parse(events[1]!.data)).toEqual({ retry_of: failed.id, node_ids: ['in', 'first', 'second'] });
    const finished = events.filter((e) => e.type === 'node.finished').map((e) => JSON.parse(e.data).node_id);
    expect(finished).toEqual(['in', 'first', 'second', 'third', 'result']);
    // The list of runs has it as a run of its own, linked.
    const listed = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(listed.data!.data.find((r) => r.id === run.id)?.retry_of).toBe(failed.id);
    expect(listed.data!.data.find((r) => r.id === failed.id)?.retry_of).toBeUndefined();
  });

  it('a retry cancelled before any worker takes it keeps its reused steps completed, and its stream never calls them not started', async () => {
    const { client: carol, userId } = await workflowsUser(server.ctx, server.baseUrl, 'carol');
    const made = await carol.POST('/api/workflows', { body: { name: 'chain', ...chain() } });
    const workflowId = made.data!.data.id;
    thirdFails = true;
    const failed = await carol.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=30' } },
      body: { inputs: { ticket: 'Charged twice' } },
    });
    expect(failed.data!.data.status).toBe('failed');
    // A second process on the same store whose queue no worker reads: its retry stays queued.
    const queueDb = await createTestDb('pg', { migrate: false });
    const idle = await startTestServer({
      databaseUrl: server.databaseUrl,
      queueUrl: queueDb.url,
      runs: { worker: false },
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    try {
      const { token } = await createAccessToken(idle.ctx, {
        userId,
        namespace: 'carol',
        name: 'idle',
        usageScenario: 'paid',
        permissions: ['workflows'],
      });
      const api = createApiClient(idle.baseUrl, { bearer: token });
      const path = { workflow_id: workflowId, run_id: failed.data!.data.id };
      const retried = await api.POST('/api/workflows/{workflow_id}/runs/{run_id}/retry', {
        params: { path },
        body: {},
      });
      expect(retried.data!.data.status).toBe('queued');
      const retryPath = { workflow_id: workflowId, run_id: retried.data!.data.id };
      expect(
        (await api.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', { params: { path: retryPath } })).response
          .status,
      ).toBe(200);
      const detail = (await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path: retryPath } }))
        .data!.data;
      const reused = detail.logs.filter((s) => s.reused_from).map((s) => s.node_id);
      expect(reused.length).toBeGreaterThan(0);
      expect(detail.logs.filter((s) => reused.includes(s.node_id)).map((s) => s.status)).toEqual(
        reused.map(() => 'completed'),
      );
      const events = (
        await api.GET('/api/workflows/{workflow_id}/runs/{run_id}/event-log', { params: { path: retryPath } })
      ).data!.data;
      const notStarted = events
        .filter((e) => e.event === 'node.finished')
        .map((e) => e.data as { node_id: string; status: string })
        .filter((d) => d.status === 'not_started')
        .map((d) => d.node_id);
      expect(notStarted.filter((id) => reused.includes(id))).toEqual([]);
      expect(notStarted).toContain('third');
    } finally {
      await idle.close();
      await queueDb.destroy();
    }
  });

  it("refuses a completed, queued or running run (409 run_not_retryable), and another user's (404)", async () => {
    const workflowId = await create();
    thirdFails = false;
    const done = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=30' } },
      body: { inputs: { ticket: 'Fine' } },
    });
    expect(done.data!.data.status).toBe('completed');
    const completed = await retry(workflowId, done.data!.data.id);
    expect(completed.response.status).toBe(409);
    expect(completed.error).toMatchObject({ code: 'run_not_retryable', status: 409 });

    const gate = replyGate();
    firstHeld = gate.held;
    try {
      const going = await alice.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId } },
        body: { inputs: { ticket: 'Slow' } },
      });
      const refused = await retry(workflowId, going.data!.data.id, { wait: false });
      expect(refused.response.status).toBe(409);
      expect(refused.error).toMatchObject({ code: 'run_not_retryable' });
      expect(refused.error!.detail).toMatch(/is (queued|running)/);
    } finally {
      firstHeld = undefined;
      gate.release();
    }

    const failed = await failedRun(workflowId);
    const foreign = await retry(workflowId, failed.id, { client: bob });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ code: 'workflow_not_found' });
    const unknown = await retry(workflowId, 'run_01JD6Z4K2B7C9D1E3F5G7H9J');
    expect(unknown.response.status).toBe(404);
    expect(unknown.error).toMatchObject({ code: 'run_not_found' });
  });

  it('on another version reuses only the steps whose nodes (and all upstream) it did not change', async () => {
    const workflowId = await create();
    const failed = await failedRun(workflowId);
    const updated = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: workflowId } },
      body: chain('second, reworded'),
    });
    const version = updated.data!.data.version;
    expect(version).toBe(failed.workflow_version! + 1);
    const before = ['first', 'second, reworded', 'third'].map(callsOf);
    thirdFails = false;
    const { data, error } = await retry(workflowId, failed.id, { version });
    if (!data) throw new Error(`retry failed: ${JSON.stringify(error)}`);
    expect(data.data).toMatchObject({ status: 'completed', retry_of: failed.id, workflow_version: version });
    expect(data.data.output).toEqual({ result: 'third(second, reworded(first(Charged twice)))' });
    expect(['first', 'second, reworded', 'third'].map(callsOf)).toEqual([before[0], before[1]! + 1, before[2]! + 1]);
    const reused = data.data.logs.filter((s) => s.reused_from === failed.id).map((s) => s.node_id);
    expect(reused).toEqual(['in', 'first']);

    // Without a version it stays on the version the run ran, though the workflow moved on.
    const same = await retry(workflowId, failed.id);
    expect(same.data!.data).toMatchObject({ status: 'completed', workflow_version: failed.workflow_version });
    expect(same.data!.data.logs.filter((s) => s.reused_from).map((s) => s.node_id)).toEqual(['in', 'first', 'second']);

    const missing = await retry(workflowId, failed.id, { version: 99 });
    expect(missing.response.status).toBe(400);
    expect(missing.error).toMatchObject({ code: 'invalid_field' });
  });

  it('an Idempotency-Key answers the same retry; the key used for another start is a 409', async () => {
    const workflowId = await create();
    const failed = await failedRun(workflowId);
    thirdFails = false;
    const key = `retry-${failed.id}`;
    const one = await retry(workflowId, failed.id, { key });
    const calls = fake.requests.length;
    const two = await retry(workflowId, failed.id, { key });
    expect(two.data!.data.id).toBe(one.data!.data.id);
    expect(two.data!.data.retry_of).toBe(failed.id);
    expect(fake.requests.length).toBe(calls);

    const other = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { 'Idempotency-Key': key } },
      body: { inputs: { ticket: 'Charged twice' } },
    });
    expect(other.response.status).toBe(409);
    expect(other.error).toMatchObject({ code: 'idempotency_key_reused' });
  });
});
