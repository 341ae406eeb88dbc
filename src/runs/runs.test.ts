// The run endpoints through a real HTTP server, a real store (PostgreSQL; MySQL too when
// TEST_MYSQL_URL is set) and a real pg-boss queue with an in-process worker; the model provider
// is a local server speaking the OpenAI wire format.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { CANCELLED_BY_DELETE, CANCELLED_BY_USER, cancelRunsOfDeletedWorkflow } from './service.ts';
import * as runService from './service.ts';
import { deleteWorkflow } from '../workflows/service.ts';
import { runsStore } from './runsStore.ts';
import * as store from './store.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';

type RunDetail = Schemas['RunDetail'];

async function apiKeyFor(ctx: AppContext, login: string): Promise<string> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(ctx, {
    userId: user.id,
    namespace: login,
    name: 'runs',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return token;
}

const TERMINAL = ['completed', 'failed', 'cancelled'];

async function createWorkflow(client: ApiClient, model: string, name = `wf ${model}`): Promise<string> {
  const { data, error } = await client.POST('/api/workflows', { body: { name, ...seedGraph(model) } });
  if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
  return data.data.id;
}

async function startRun(
  client: ApiClient,
  workflowId: string,
  inputs: Record<string, string>,
  key?: string,
): Promise<RunDetail> {
  const { data, error, response } = await client.POST('/api/workflows/{workflow_id}/run', {
    params: { path: { workflow_id: workflowId }, ...(key ? { header: { 'Idempotency-Key': key } } : {}) },
    body: { inputs },
  });
  if (!data) throw new Error(`run failed: ${response.status} ${JSON.stringify(error)}`);
  expect(response.status).toBe(202);
  expect(response.headers.get('location')).toBe(`/api/workflows/${workflowId}/runs/${data.data.id}`);
  // The 202 has the 200's schema (generated clients decode both as RunDetail): no steps yet when just queued.
  if (!key) expect(data.data.logs).toEqual([]);
  return data.data;
}

async function getRun(client: ApiClient, workflowId: string, runId: string) {
  const { data, error } = await client.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
    params: { path: { workflow_id: workflowId, run_id: runId } },
  });
  if (!data) throw new Error(`get failed: ${JSON.stringify(error)}`);
  return data.data;
}

/** Polls the run, as a client would, until `until` holds (default: a terminal status). */
async function pollRun(
  client: ApiClient,
  workflowId: string,
  runId: string,
  until = (r: RunDetail) => TERMINAL.includes(r.status),
  timeoutMs = 15_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await getRun(client, workflowId, runId);
    if (until(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(testDialects())('workflow runs on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let aliceKey: string;
  let bob: ApiClient;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    aliceKey = await apiKeyFor(server.ctx, 'alice');
    alice = createApiClient(server.baseUrl, { bearer: aliceKey });
    bob = createApiClient(server.baseUrl, { bearer: await apiKeyFor(server.ctx, 'bob') });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('runs the seed example on echo to completed, with the output keyed by text_output id and per-node logs', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const queued = await startRun(alice, workflowId, { ticket: 'The export button does nothing on Safari 18.' });
    expect(queued).toMatchObject({
      workflow_id: workflowId,
      workflow_version: 1,
      inputs: { ticket: 'The export button does nothing on Safari 18.' },
    });
    expect(queued.id).toMatch(/^run_[0-9A-Z]{26}$/);

    const run = await pollRun(alice, workflowId, queued.id);
    expect(run).toMatchObject({
      status: 'completed',
      output: { result: 'The export button does nothing on Safari 18.' },
      error: null,
    });
    expect(run.duration).toBeGreaterThanOrEqual(0);
    expect(Date.parse(run.finished_at!)).toBeGreaterThanOrEqual(Date.parse(run.started_at!));
    expect(run.logs.map((s) => [s.node_id, s.node_type, s.status])).toEqual([
      ['input', 'text_input', 'completed'],
      ['summarise', 'llm_call', 'completed'],
      ['result', 'text_output', 'completed'],
    ]);
    expect(run.logs[1]).toMatchObject({
      input: 'The export button does nothing on Safari 18.',
      output: 'The export button does nothing on Safari 18.',
      truncated: false,
      usage: { prompt_tokens: 8, completion_tokens: 8, total_tokens: 16 },
      error: null,
    });
  });

  it('sends the llm_call node to the OpenAI-compatible provider with its model, temperature and max_tokens', async () => {
    const workflowId = await createWorkflow(alice, 'llama-3');
    const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'hello there' })).id);
    expect(run).toMatchObject({ status: 'completed', output: { result: 'HELLO THERE' } });
    expect(fake.requests.at(-1)).toMatchObject({
      model: 'llama-3',
      temperature: 0.2,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(run.logs[1]!.usage).toMatchObject({ total_tokens: 4 });
  });

  it('builds the prompt from its Liquid template over inputs and upstream outputs; a template node renders without a model', async () => {
    const { data, error } = await alice.POST('/api/workflows', {
      body: {
        name: 'templated',
        nodes: [
          { id: 'ticket', type: 'text_input', config: { variable: 'ticket' } },
          {
            id: 'framed',
            type: 'template',
            config: { template: 'Ticket #{{ inputs.number }}: {{ inputs.ticket | strip }}' },
          },
          { id: 'number', type: 'text_input', config: { variable: 'number' } },
          {
            id: 'summarise',
            type: 'llm_call',
            config: {
              model: 'llama-3',
              system_prompt: 'Be brief.',
              prompt:
                'Summarise in one line.\n{{ nodes.framed.output }}{% if inputs.number == "7" %} (urgent){% endif %}',
            },
          },
          { id: 'result', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'ticket', to: 'framed' },
          { from: 'number', to: 'framed' },
          { from: 'framed', to: 'summarise' },
          { from: 'summarise', to: 'result' },
        ],
      },
    });
    if (!data) throw new Error(JSON.stringify(error));
    const run = await pollRun(
      alice,
      data.data.id,
      (await startRun(alice, data.data.id, { ticket: '  Export is broken  ', number: '7' })).id,
    );
    expect(run.status).toBe('completed');
    expect(fake.requests.at(-1)!.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Summarise in one line.\nTicket #7: Export is broken (urgent)' },
    ]);
    expect(run.logs.find((s) => s.node_id === 'framed')).toMatchObject({
      node_type: 'template',
      status: 'completed',
      output: 'Ticket #7: Export is broken',
      usage: null,
    });
    expect(run.logs.find((s) => s.node_id === 'summarise')!.input).toBe(
      'Summarise in one line.\nTicket #7: Export is broken (urgent)',
    );
    expect(run.output).toEqual({ result: 'SUMMARISE IN ONE LINE.\nTICKET #7: EXPORT IS BROKEN (URGENT)' });
  });

  it('refuses at save a prompt naming an unknown input or a node that is not upstream (422)', async () => {
    const { response, error } = await alice.POST('/api/workflows', {
      body: {
        name: 'bad refs',
        nodes: [
          { id: 'input', type: 'text_input', config: { variable: 'ticket' } },
          {
            id: 'summarise',
            type: 'llm_call',
            config: { model: 'echo', prompt: '{{ inputs.tikcet }} {{ nodes.result.output }}' },
          },
          { id: 'result', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'input', to: 'summarise' },
          { from: 'summarise', to: 'result' },
        ],
      },
    });
    expect(response.status).toBe(422);
    expect(error?.errors).toEqual([
      { pointer: '/nodes/1/config/prompt', message: '"inputs.tikcet": no text_input has the variable "tikcet"' },
      {
        pointer: '/nodes/1/config/prompt',
        message: '"nodes.result.output": node "result" is not upstream of this node (add an edge path from it)',
      },
    ]);
  });

  it('branches: only the branch the condition takes runs; nodes reached only through the other are skipped and their outputs absent', async () => {
    const { data, error } = await alice.POST('/api/workflows', {
      body: {
        name: 'triage',
        nodes: [
          { id: 'ticket', type: 'text_input', config: { variable: 'ticket' } },
          {
            id: 'is_urgent',
            type: 'condition',
            config: { left: '{{ inputs.ticket | downcase }}', operator: 'contains', right: 'urgent' },
          },
          { id: 'page', type: 'llm_call', config: { model: 'llama-3', prompt: 'Page someone: {{ inputs.ticket }}' } },
          { id: 'paged', type: 'text_output', config: { format: 'plain' } },
          { id: 'queue', type: 'template', config: { template: 'Queued: {{ inputs.ticket }}' } },
          { id: 'queued', type: 'text_output', config: { format: 'plain' } },
          { id: 'log', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'ticket', to: 'is_urgent' },
          { from: 'is_urgent', to: 'page', branch: 'true' },
          { from: 'page', to: 'paged' },
          { from: 'is_urgent', to: 'queue', branch: 'false' },
          { from: 'queue', to: 'queued' },
          { from: 'page', to: 'log' },
          { from: 'queue', to: 'log' },
        ],
      },
    });
    if (!data) throw new Error(JSON.stringify(error));
    const workflowId = data.data.id;
    const calls = fake.requests.length;

    const calm = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'Export is slow' })).id);
    expect(calm.status).toBe('completed');
    expect(calm.output).toEqual({ queued: 'Queued: Export is slow', log: 'Queued: Export is slow' });
    expect(Object.fromEntries(calm.logs.map((s) => [s.node_id, s.status]))).toEqual({
      ticket: 'completed',
      is_urgent: 'completed',
      page: 'skipped',
      paged: 'skipped',
      queue: 'completed',
      queued: 'completed',
      log: 'completed',
    });
    expect(calm.logs.find((s) => s.node_id === 'is_urgent')).toMatchObject({
      input: '"export is slow" contains "urgent"',
      output: 'false',
    });
    expect(calm.logs.find((s) => s.node_id === 'page')).toMatchObject({ started_at: null, input: null, output: null });
    expect(fake.requests.length).toBe(calls); // the skipped llm_call never reached the provider

    const urgent = await pollRun(
      alice,
      workflowId,
      (await startRun(alice, workflowId, { ticket: 'URGENT: export down' })).id,
    );
    expect(urgent.output).toEqual({
      paged: 'PAGE SOMEONE: URGENT: EXPORT DOWN',
      log: 'PAGE SOMEONE: URGENT: EXPORT DOWN',
    });
    expect(
      urgent.logs
        .filter((s) => s.status === 'skipped')
        .map((s) => s.node_id)
        .sort(),
    ).toEqual(['queue', 'queued']);
    expect(fake.requests.length).toBe(calls + 1);
  });

  describe('Prefer: wait=N (RFC 7240)', () => {
    const getWaiting = (workflowId: string, runId: string, prefer: string) =>
      alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
        params: { path: { workflow_id: workflowId, run_id: runId }, header: { Prefer: prefer } },
      });

    it('GET answers once the worker ends the run (woken by its NOTIFY), with Preference-Applied', async () => {
      // What every process hears on the queue database's LISTEN connection.
      const heard: (string | null)[] = [];
      const stop = await server.ctx.runs!.queue.watchRunEnded((id) => heard.push(id));
      fake.replies = [{ kind: 'completion', content: 'slow answer', delayMs: 300 }];
      const workflowId = await createWorkflow(alice, 'llama-3');
      const started = await startRun(alice, workflowId, { ticket: 'x' });
      const { data, response } = await getWaiting(workflowId, started.id, 'wait=30');
      stop();
      expect(response.headers.get('preference-applied')).toBe('wait=30');
      expect(data!.data).toMatchObject({ status: 'completed', output: { result: 'slow answer' } });
      expect(data!.data.logs).toHaveLength(3);
      expect(heard).toContain(started.id); // the worker's NOTIFY, the waiter's wake-up (waiting.unit.test.ts)
    });

    it("a process tells its own waiters of a run's end at once, and every process by NOTIFY", async () => {
      const heard: string[] = [];
      const stop = await server.ctx.runs!.queue.watchRunEnded((id) => id === 'run_told_here' && heard.push(id));
      const announced = server.ctx.runs!.queue.announceRunEnded('run_told_here');
      expect(heard).toEqual(['run_told_here']); // before any round trip to the queue database
      await announced;
      await vi.waitFor(() => expect(heard).toEqual(['run_told_here', 'run_told_here'])); // its NOTIFY, as other processes hear it
      stop();
    });

    it('GET answers when another request cancels the run', async () => {
      fake.replies = [{ kind: 'hang' }];
      const workflowId = await createWorkflow(alice, 'llama-3');
      const started = await startRun(alice, workflowId, { ticket: 'x' });
      const waiting = getWaiting(workflowId, started.id, 'respond-async, wait=30');
      await pollRun(alice, workflowId, started.id, (r) => r.status === 'running');
      await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
        params: { path: { workflow_id: workflowId, run_id: started.id } },
      });
      const { data, response } = await waiting;
      expect(response.headers.get('preference-applied')).toBe('wait=30');
      expect(data!.data.status).toBe('cancelled');
    });

    it('GET after the wait answers with the run as it is; a wait over 60 is taken as 60; no Prefer, no Preference-Applied', async () => {
      fake.replies = [{ kind: 'hang' }];
      const workflowId = await createWorkflow(alice, 'llama-3');
      const started = await startRun(alice, workflowId, { ticket: 'x' });
      const { data, response } = await getWaiting(workflowId, started.id, 'wait=1');
      expect(response.status).toBe(200);
      expect(response.headers.get('preference-applied')).toBe('wait=1');
      expect(['queued', 'running']).toContain(data!.data.status);
      const plain = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
        params: { path: { workflow_id: workflowId, run_id: started.id } },
      });
      expect(plain.response.headers.get('preference-applied')).toBeNull();
      await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
        params: { path: { workflow_id: workflowId, run_id: started.id } },
      });
      const ended = await getWaiting(workflowId, started.id, 'wait=600');
      expect(ended.response.headers.get('preference-applied')).toBe('wait=60');
      expect(ended.data!.data.status).toBe('cancelled');
      // Neither a fraction nor a huge value is dropped silently; Preference-Applied says what applied.
      expect((await getWaiting(workflowId, started.id, 'wait=1.5')).response.headers.get('preference-applied')).toBe(
        'wait=2',
      );
      expect(
        (await getWaiting(workflowId, started.id, 'wait=99999999999999')).response.headers.get('preference-applied'),
      ).toBe('wait=60');
    });

    it('a run this process ended is kept as the store has it, run and log, and answers the waiters its end wakes', async () => {
      const runner = server.ctx.runs!.runner!;
      const cases: { model: string; replies: typeof fake.replies }[] = [
        { model: 'echo', replies: [] },
        {
          model: 'llama-3',
          replies: [{ kind: 'error', status: 400, message: 'context too long', type: 'invalid_request_error' }],
        }, // its node's error logged
        // Slower than the step log's delay: the model's step is written running, then ended.
        { model: 'llama-3', replies: [{ kind: 'completion', content: 'slow answer', delayMs: 150 }] },
      ];
      for (const { model, replies } of cases) {
        fake.replies = replies;
        const workflowId = await createWorkflow(alice, model);
        const waited = await alice.POST('/api/workflows/{workflow_id}/run', {
          params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=30' } },
          body: { inputs: { ticket: 'kept' } },
        });
        expect(waited.response.status).toBe(200);
        const runId = waited.data!.data.id;
        const stored = await getRun(alice, workflowId, runId);
        if (replies[0]?.kind === 'error')
          expect(stored.logs.find((step) => step.node_type === 'llm_call')!.error).not.toBeNull();
        expect(runner.endedHere(runId)).toEqual({ userId: expect.any(Number), workflowId, detail: stored });
        expect(waited.data!.data).toEqual(stored);
      }
    });

    it('POST .../run answers 200 with the ended run and its logs when it ends within the wait (blocking mode), else 202', async () => {
      const workflowId = await createWorkflow(alice, 'echo');
      const blocking = await alice.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=30' } },
        body: { inputs: { ticket: 'right away' } },
      });
      expect(blocking.response.status).toBe(200);
      expect(blocking.response.headers.get('preference-applied')).toBe('wait=30');
      expect(blocking.response.headers.get('location')).toBe(
        `/api/workflows/${workflowId}/runs/${blocking.data!.data.id}`,
      );
      expect(blocking.data!.data).toMatchObject({ status: 'completed', output: { result: 'right away' } });
      expect((blocking.data!.data as RunDetail).logs.map((s) => s.status)).toEqual([
        'completed',
        'completed',
        'completed',
      ]);

      fake.replies = [{ kind: 'hang' }];
      const slowWorkflow = await createWorkflow(alice, 'llama-3');
      const accepted = await alice.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: slowWorkflow }, header: { Prefer: 'wait=1' } },
        body: { inputs: { ticket: 'hangs' } },
      });
      expect(accepted.response.status).toBe(202);
      expect(accepted.response.headers.get('preference-applied')).toBe('wait=1');
      // Not ended after the wait: the steps so far (none while queued on a busy machine; else the
      // input done and the model call under way).
      const notEnded = accepted.data!.data;
      expect(notEnded.logs.map((s) => s.status)).toEqual(notEnded.status === 'queued' ? [] : ['completed', 'running']);
      await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
        params: { path: { workflow_id: slowWorkflow, run_id: accepted.data!.data.id } },
      });
    });

    it('every request that waits stops watching run ends once answered: 200, 202, 404, 429, and a client that left', async () => {
      // The queue's run-end watchers that the requests below begin and have not stopped.
      const queue = server.ctx.runs!.queue;
      const watchRunEnded = queue.watchRunEnded;
      let watching = 0;
      queue.watchRunEnded = async (watcher) => {
        const stop = await watchRunEnded(watcher);
        watching++;
        return () => {
          watching--;
          stop();
        };
      };
      const runStarts = server.rateLimiters.runStarts;
      const hit = runStarts.hit;
      const wait = { Prefer: 'wait=30' };
      try {
        const echo = await createWorkflow(alice, 'echo');
        const ended = await alice.POST('/api/workflows/{workflow_id}/run', {
          params: { path: { workflow_id: echo }, header: wait },
          body: { inputs: { ticket: 'x' } },
        });
        expect(ended.response.status).toBe(200);
        expect(watching).toBe(0);
        expect((await getWaiting(echo, ended.data!.data.id, 'wait=30')).response.status).toBe(200);
        expect(watching).toBe(0);
        const missing = await alice.POST('/api/workflows/{workflow_id}/run', {
          params: { path: { workflow_id: 'wf_missing' }, header: wait },
          body: { inputs: { ticket: 'x' } },
        });
        expect(missing.response.status).toBe(404);
        expect((await getWaiting(echo, 'run_missing', 'wait=30')).response.status).toBe(404);
        expect(watching).toBe(0);
        runStarts.hit = () => 30; // USER_RUNS_PER_MINUTE spent
        const limited = await alice.POST('/api/workflows/{workflow_id}/run', {
          params: { path: { workflow_id: echo }, header: wait },
          body: { inputs: { ticket: 'x' } },
        });
        runStarts.hit = hit;
        expect(limited.response.status).toBe(429);
        expect(watching).toBe(0);

        fake.replies = [{ kind: 'hang' }];
        const hangs = await createWorkflow(alice, 'llama-3');
        const accepted = await alice.POST('/api/workflows/{workflow_id}/run', {
          params: { path: { workflow_id: hangs }, header: { Prefer: 'wait=1' } },
          body: { inputs: { ticket: 'x' } },
        });
        expect(accepted.response.status).toBe(202);
        expect(watching).toBe(0);
        const leaving = new AbortController();
        const left = alice
          .GET('/api/workflows/{workflow_id}/runs/{run_id}', {
            params: { path: { workflow_id: hangs, run_id: accepted.data!.data.id }, header: wait },
            signal: leaving.signal,
          })
          .catch(() => undefined);
        await vi.waitFor(() => expect(watching).toBe(1));
        leaving.abort();
        await left;
        await vi.waitFor(() => expect(watching).toBe(0));
        await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
          params: { path: { workflow_id: hangs, run_id: accepted.data!.data.id } },
        });
      } finally {
        queue.watchRunEnded = watchRunEnded;
        runStarts.hit = hit;
      }
    });
  });

  describe('per-node policies and classified provider failures', () => {
    async function workflowWith(config: Record<string, unknown>): Promise<string> {
      const graph = seedGraph('llama-3');
      const nodes = graph.nodes.map((n) => (n.type === 'llm_call' ? { ...n, config: { ...n.config, ...config } } : n));
      const { data, error } = await alice.POST('/api/workflows', {
        body: { name: 'policies', nodes, edges: graph.edges } as never,
      });
      if (!data) throw new Error(JSON.stringify(error));
      return data.data.id;
    }

    it('retry.max_attempts bounds the attempts; a 429 after every attempt is rate_limited', async () => {
      const workflowId = await workflowWith({ retry: { max_attempts: 2, backoff_seconds: 0 } });
      fake.replies = Array.from({ length: 3 }, () => ({
        kind: 'error' as const,
        status: 429,
        message: 'slow down',
        type: 'rate_limit_error',
        retryAfter: 0,
      }));
      const before = fake.requests.length;
      const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'x' })).id);
      fake.replies = [];
      expect(fake.requests.length - before).toBe(2);
      expect(run).toMatchObject({ status: 'failed', error: { code: 'rate_limited', node_id: 'summarise' } });
    });

    it('an answer that is not a completion is provider_bad_response, not retried', async () => {
      const workflowId = await workflowWith({});
      fake.replies = [{ kind: 'raw', status: 200, body: '<html>gateway</html>' }];
      const before = fake.requests.length;
      const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'x' })).id);
      expect(fake.requests.length - before).toBe(1);
      expect(run).toMatchObject({ status: 'failed', error: { code: 'provider_bad_response', node_id: 'summarise' } });
    });

    it('timeout_seconds limits each attempt: provider_timeout', async () => {
      const workflowId = await workflowWith({ timeout_seconds: 0.2, retry: { max_attempts: 1 } });
      fake.replies = [{ kind: 'hang' }];
      const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'x' })).id);
      expect(run).toMatchObject({ status: 'failed', error: { code: 'provider_timeout', node_id: 'summarise' } });
      expect(run.error!.message).toBe('The model provider did not answer within 0.2 s.');
    });

    it('on_error continue: the node is logged failed with its error, its text is empty, and the run completes', async () => {
      const workflowId = await workflowWith({ on_error: 'continue', retry: { max_attempts: 1 } });
      fake.replies = [{ kind: 'error', status: 400, message: 'context too long', type: 'invalid_request_error' }];
      const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'x' })).id);
      expect(run).toMatchObject({ status: 'completed', error: null, output: { result: '' } });
      expect(run.logs.find((s) => s.node_id === 'summarise')).toMatchObject({
        status: 'failed',
        output: null,
        error: { code: 'provider_error', node_id: 'summarise' },
      });
      expect(run.logs.find((s) => s.node_id === 'result')).toMatchObject({ status: 'completed', output: '' });
    });

    it('refuses bad policies at save (422)', async () => {
      const graph = seedGraph('llama-3');
      const nodes = graph.nodes.map((n) =>
        n.type === 'llm_call'
          ? {
              ...n,
              config: {
                ...n.config,
                retry: { max_attempts: 0, backoff_seconds: -1 },
                timeout_seconds: 0,
                on_error: 'ignore',
              },
            }
          : n,
      );
      const response = await fetch(`${server.baseUrl}/api/workflows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${aliceKey}` },
        body: JSON.stringify({ name: 'bad policies', nodes, edges: graph.edges }),
      });
      expect(response.status).toBe(422);
      expect(((await response.json()) as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toEqual([
        '/nodes/1/config/retry/max_attempts',
        '/nodes/1/config/retry/backoff_seconds',
        '/nodes/1/config/timeout_seconds',
        '/nodes/1/config/on_error',
      ]);
    });
  });

  it('keeps step inputs and outputs whole (up to the documented 200000 characters) and sums token usage on the run', async () => {
    const workflowId = await createWorkflow(alice, 'echo', 'long');
    const ticket = 'word '.repeat(30_000).trim();
    const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket })).id);
    expect(run.status).toBe('completed');
    const first256 = ticket.split(' ').slice(0, 256).join(' '); // the seed's max_tokens on echo
    expect(run.logs.map((s) => [s.input, s.output, s.truncated])).toEqual([
      [ticket, ticket, false],
      [ticket, first256, false],
      [first256, first256, false],
    ]);
    expect(run.usage).toEqual({ prompt_tokens: 30_000, completion_tokens: 256, total_tokens: 30_256 });
  });

  it('cuts a step text longer than 200000 characters there and says so', async () => {
    const { data } = await alice.POST('/api/workflows', {
      body: {
        name: 'joined',
        nodes: [
          { id: 'a', type: 'text_input', config: { variable: 'a' } },
          { id: 'b', type: 'text_input', config: { variable: 'b' } },
          { id: 'result', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'a', to: 'result' },
          { from: 'b', to: 'result' },
        ],
      },
    });
    const workflowId = data!.data.id;
    const inputs = { a: 'a'.repeat(150_000), b: 'b'.repeat(150_000) };
    const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, inputs)).id);
    expect(run.status).toBe('completed');
    const result = run.logs.find((s) => s.node_id === 'result')!;
    expect(result.truncated).toBe(true);
    expect(result.input).toHaveLength(200_000);
    expect(result.output).toHaveLength(200_000);
    expect(run.logs.filter((s) => s.node_id !== 'result').every((s) => !s.truncated)).toBe(true);
    expect(run.output).toEqual({ result: `${inputs.a}\n${inputs.b}` }); // the run's output itself is never cut
  });

  it.each([
    [400, 'context too long'],
    [500, 'boom'],
  ])('a provider answering %i fails the run with provider_error and the node id', async (status, message) => {
    fake.replies = Array.from({ length: 3 }, () => ({ kind: 'error' as const, status, message }));
    const workflowId = await createWorkflow(alice, 'llama-3');
    const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'x' })).id);
    fake.replies = [];
    expect(run.status).toBe('failed');
    expect(run.output).toBeNull();
    expect(run.error).toMatchObject({ code: 'provider_error', node_id: 'summarise' });
    expect(run.error!.message).toContain(message);
    expect(run.logs.find((s) => s.node_id === 'summarise')).toMatchObject({
      status: 'failed',
      error: { code: 'provider_error' },
    });
    expect(run.logs.find((s) => s.node_id === 'result')).toMatchObject({
      status: 'not_started',
      started_at: null,
      input: null,
      output: null,
    });
    expect(run.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('an unknown model is refused when the workflow is saved (the model list is fixed): 422 at the model', async () => {
    // Only llama-3 is routed to the provider (and echo is built in), so gpt-9 could never run.
    const { response, error } = await alice.POST('/api/workflows', {
      body: { name: 'unknown model', ...seedGraph('gpt-9') },
    });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({
      errors: [
        { pointer: '/nodes/1/config/model', message: 'unknown model "gpt-9"; this service serves echo, llama-3' },
      ],
    });
  });

  it('rejects missing and extra inputs with a 400 listing each', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const { error, response } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId } },
      body: { inputs: { tiket: 'typo' } },
    });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ status: 400 });
    const pointers = (error as { errors: { pointer: string }[] }).errors.map((e) => e.pointer).sort();
    expect(pointers).toEqual(['/body/inputs/ticket', '/body/inputs/tiket']);
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(data!.meta.total).toBe(0);
  });

  it('cancels a run hanging on the provider: cancelled at once, the provider call aborted, then 409', async () => {
    fake.replies = [{ kind: 'hang' }];
    const workflowId = await createWorkflow(alice, 'llama-3');
    const started = await startRun(alice, workflowId, { ticket: 'wait' });
    await pollRun(
      alice,
      workflowId,
      started.id,
      (r) => r.status === 'running' && r.logs.some((s) => s.node_id === 'summarise'),
    );

    const { data, response } = await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
      params: { path: { workflow_id: workflowId, run_id: started.id } },
    });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });

    // The worker stops the in-flight call and closes the node's log as cancelled.
    const run = await pollRun(alice, workflowId, started.id, (r) => r.logs.length === 3);
    expect(run.status).toBe('cancelled');
    expect(run.logs.map((s) => [s.node_id, s.status])).toEqual([
      ['input', 'completed'],
      ['summarise', 'cancelled'],
      ['result', 'not_started'],
    ]);

    const again = await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
      params: { path: { workflow_id: workflowId, run_id: started.id } },
    });
    expect(again.response.status).toBe(409);
  });

  it('a cancel made by another API process (no local abort) stops the in-flight provider call within about a second', async () => {
    fake.replies = [{ kind: 'hang' }];
    const workflowId = await createWorkflow(alice, 'llama-3');
    const started = await startRun(alice, workflowId, { ticket: 'wait' });
    await pollRun(
      alice,
      workflowId,
      started.id,
      (r) => r.status === 'running' && r.logs.some((s) => s.node_id === 'summarise'),
    );
    // What another process's cancel does: only the row changes; this process's worker must notice.
    expect(await runsStore(server.ctx.db).cancel(started.id, Date.now(), CANCELLED_BY_USER)).toBe(true);
    const run = await pollRun(
      alice,
      workflowId,
      started.id,
      (r) => r.logs.find((s) => s.node_id === 'summarise')?.status === 'cancelled',
      5_000,
    );
    expect(run).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
  });

  it('cancel of a completed run is a 409', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'x' })).id);
    const { response } = await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
      params: { path: { workflow_id: workflowId, run_id: run.id } },
    });
    expect(response.status).toBe(409);
  });

  it('Idempotency-Key: a repeated request returns the same run; different inputs are a 409', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const first = await startRun(alice, workflowId, { ticket: 'once' }, 'key-1');
    await pollRun(alice, workflowId, first.id);
    const second = await startRun(alice, workflowId, { ticket: 'once' }, 'key-1');
    expect(second.id).toBe(first.id);
    // Returned again, the run comes with its steps so far (here all of them: it has ended).
    expect(second).toMatchObject({ status: 'completed', output: { result: 'once' } });
    expect((second as RunDetail).logs.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
    const { response } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { 'Idempotency-Key': 'key-1' } },
      body: { inputs: { ticket: 'twice' } },
    });
    expect(response.status).toBe(409);
    // The same key on another workflow is another run.
    const other = await createWorkflow(alice, 'echo');
    expect((await startRun(alice, other, { ticket: 'once' }, 'key-1')).id).not.toBe(first.id);
  });

  it('Idempotency-Key: keys are compared exactly, so a key in another case is another run', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const lower = await startRun(alice, workflowId, { ticket: 'case' }, 'abc-1');
    const upper = await startRun(alice, workflowId, { ticket: 'case' }, 'ABC-1');
    expect(upper.id).not.toBe(lower.id);
    // Different inputs under the other-case key are a new run, not a 409 against `abc-1`.
    expect((await startRun(alice, workflowId, { ticket: 'other' }, 'Abc-1')).id).not.toBe(lower.id);
    expect((await startRun(alice, workflowId, { ticket: 'case' }, 'ABC-1')).id).toBe(upper.id);
  });

  it('run ids and statuses are compared exactly: another case is 404, search=COMPLETED matches nothing', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'exact' })).id);
    expect(run.status).toBe('completed');
    const flipped = run.id.replace(/[a-z]/gi, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
    const other = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: flipped } },
    });
    expect(other.response.status).toBe(404);
    const search = async (term: string) =>
      (
        await alice.GET('/api/workflows/{workflow_id}/runs', {
          params: { path: { workflow_id: workflowId }, query: { search: term } },
        })
      ).data!.meta.total;
    expect(await search('completed')).toBe(1);
    expect(await search('COMPLETED')).toBe(0);
    expect(await search('Completed')).toBe(0);
    expect(await search(flipped.slice(0, 10))).toBe(0);
    expect(await search(run.id.slice(0, 10))).toBe(1);
  });

  it('Idempotency-Key: concurrent identical requests start one run', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => startRun(alice, workflowId, { ticket: 'race' }, 'race-key')),
    );
    expect(new Set(runs.map((r) => r.id)).size).toBe(1);
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(data!.meta.total).toBe(1);
    expect((await pollRun(alice, workflowId, runs[0]!.id)).status).toBe('completed');
  });

  it('history: newest first, paginated with Link, search by status or id prefix', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await startRun(alice, workflowId, { ticket: `n${i}` })).id);
    for (const id of ids) await pollRun(alice, workflowId, id);
    fake.replies = [{ kind: 'error', status: 400, message: 'bad' }];
    const failingWorkflow = await createWorkflow(alice, 'llama-3');
    await pollRun(alice, failingWorkflow, (await startRun(alice, failingWorkflow, { ticket: 'x' })).id);

    const page1 = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId }, query: { per_page: 2 } },
    });
    expect(page1.data!.data.map((r) => r.id)).toEqual([ids[4], ids[3]]);
    expect(page1.data!.meta).toEqual({ page: 1, per_page: 2, total: 5, total_pages: 3 });
    expect(page1.response.headers.get('link')).toContain(
      `</api/workflows/${workflowId}/runs?page=2&per_page=2>; rel="next"`,
    );
    const page3 = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId }, query: { per_page: 2, page: 3 } },
    });
    expect(page3.data!.data.map((r) => r.id)).toEqual([ids[0]]);
    expect('logs' in page3.data!.data[0]!).toBe(false);

    const completed = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId }, query: { search: 'completed' } },
    });
    expect(completed.data!.meta.total).toBe(5);
    const failed = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId }, query: { search: 'failed' } },
    });
    expect(failed.data!.meta.total).toBe(0);
    const byPrefix = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId }, query: { search: ids[2]!.slice(0, 24) } },
    });
    expect(byPrefix.data!.data.map((r) => r.id)).toContain(ids[2]);
    const exact = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId }, query: { search: ids[2]! } },
    });
    expect(exact.data!.data.map((r) => r.id)).toEqual([ids[2]]);
  });

  it("another user's workflow and runs are 404; a run under another workflow is 404", async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'mine' })).id);
    const path = { workflow_id: workflowId, run_id: run.id };
    expect((await bob.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } })).response.status).toBe(
      404,
    );
    expect(
      (await bob.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: workflowId } } })).response
        .status,
    ).toBe(404);
    expect(
      (await bob.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', { params: { path } })).response.status,
    ).toBe(404);
    expect(
      (
        await bob.POST('/api/workflows/{workflow_id}/run', {
          params: { path: { workflow_id: workflowId } },
          body: { inputs: { ticket: 'x' } },
        })
      ).response.status,
    ).toBe(404);
    const bobsWorkflow = await createWorkflow(bob, 'echo');
    expect(
      (
        await bob.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
          params: { path: { workflow_id: bobsWorkflow, run_id: run.id } },
        })
      ).response.status,
    ).toBe(404);
    const otherOfAlice = await createWorkflow(alice, 'echo');
    expect(
      (
        await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
          params: { path: { workflow_id: otherOfAlice, run_id: run.id } },
        })
      ).response.status,
    ).toBe(404);
  });

  it('runs of a deleted workflow are gone with it (default retention 0): 404 for list, read, cancel and run', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const run = await pollRun(alice, workflowId, (await startRun(alice, workflowId, { ticket: 'keep' })).id);
    await alice.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } });
    const path = { workflow_id: workflowId, run_id: run.id };
    expect((await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } })).response.status).toBe(
      404,
    );
    expect(
      (await alice.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: workflowId } } })).response
        .status,
    ).toBe(404);
    expect(
      (await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', { params: { path } })).response.status,
    ).toBe(404);
    const { response } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId } },
      body: { inputs: { ticket: 'x' } },
    });
    expect(response.status).toBe(404);
  });

  it('with the quotas, a workflow deleted after startRun read it is a 404 and no run is stored (the quota transaction locks the workflow)', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const db = server.ctx.db;
    const { user_id: userId } = (await db('workflows').where({ id: workflowId }).first()) as { user_id: number };
    // The delete lands between startRun's read of the workflow and the quota's transaction: as the
    // read's connection goes back to the pool (the first one startRun takes).
    let deleted = false;
    const client = new Proxy(db.client, {
      get(target, prop) {
        if (prop !== 'releaseConnection') return Reflect.get(target, prop, target);
        return async (connection: unknown) => {
          await target.releaseConnection(connection);
          if (!deleted) {
            deleted = true;
            await deleteWorkflow(server.ctx, userId, workflowId);
          }
        };
      },
    });
    const racing = new Proxy(db, {
      get: (target, prop) => (prop === 'client' ? client : Reflect.get(target, prop, target)),
    });
    const started = runService.startRun({ ...server.ctx, db: racing }, userId, workflowId, { ticket: 'x' }, undefined, {
      hit: () => null,
    });
    await expect(started).rejects.toMatchObject({ status: 404 });
    expect(deleted).toBe(true);
    expect(await db('runs').where({ workflow_id: workflowId }).pluck('id')).toEqual([]);
  });

  it('a queue that cannot be written fails the run (never left queued) and answers 503', async () => {
    const workflowId = await createWorkflow(alice, 'echo');
    const queue = server.ctx.runs!.queue;
    const enqueue = queue.enqueue;
    queue.enqueue = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    try {
      const { response } = await alice.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId }, header: { 'Idempotency-Key': 'q-down' } },
        body: { inputs: { ticket: 'x' } },
      });
      expect(response.status).toBe(503);
    } finally {
      queue.enqueue = enqueue;
    }
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(data!.data).toHaveLength(1);
    expect(data!.data[0]).toMatchObject({ status: 'failed', error: { code: 'queue_unavailable' } });
    // The client's retry with the same key re-queues that run.
    const retried = await startRun(alice, workflowId, { ticket: 'x' }, 'q-down');
    expect(retried.id).toBe(data!.data[0]!.id);
    expect((await pollRun(alice, workflowId, retried.id)).status).toBe('completed');
  });

  // Runs of a deleted workflow kept readable for an hour: with the default retention of 0 the
  // machinery's 5 s purge may remove the cancelled run before the test reads it, or the workflow
  // itself between a racing delete and the run's insert (a foreign-key error, not the 404).
  describe('deleting a workflow with runs in flight', () => {
    let kept: TestServer;
    let client: ApiClient;
    beforeAll(async () => {
      kept = await startTestServer({
        dialect,
        runs: true,
        env: {
          MODEL_PROVIDER_BASE_URL: fake.baseUrl,
          MODEL_PROVIDER_MODELS: 'llama-3',
          DELETED_WORKFLOW_RETENTION_SECONDS: '3600',
        },
      });
      client = createApiClient(kept.baseUrl, { bearer: await apiKeyFor(kept.ctx, 'dave') });
    });
    afterAll(async () => {
      await kept?.close();
    });

    it('deleting a workflow cancels its in-flight runs and aborts their provider calls', async () => {
      fake.replies = [{ kind: 'hang' }];
      const workflowId = await createWorkflow(client, 'llama-3');
      const started = await startRun(client, workflowId, { ticket: 'wait' });
      await pollRun(
        client,
        workflowId,
        started.id,
        (r) => r.status === 'running' && r.logs.some((s) => s.node_id === 'summarise'),
      );
      expect(
        (await client.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } }))
          .response.status,
      ).toBe(204);

      const run = await store.findRun(kept.ctx.db, started.id);
      expect(run).toMatchObject({ status: 'cancelled' });
      expect(JSON.parse(run!.error!)).toMatchObject({
        code: 'cancelled',
        message: 'The run was cancelled: its workflow was deleted.',
      });
      // The worker stops the hanging call: the node's log closes as cancelled.
      const deadline = Date.now() + 5_000;
      let steps = await store.listSteps(kept.ctx.db, started.id);
      while (steps.find((s) => s.node_id === 'summarise')?.status !== 'cancelled' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        steps = await store.listSteps(kept.ctx.db, started.id);
      }
      expect(steps.find((s) => s.node_id === 'summarise')?.status).toBe('cancelled');
    });

    it('a run started while its workflow is deleted is cancelled, never enqueued: the delete sweep cannot miss it', async () => {
      const workflowId = await createWorkflow(client, 'echo');
      const db = kept.ctx.db;
      const { user_id: userId } = (await db('workflows').where({ id: workflowId }).first()) as { user_id: number };
      // The delete (and its cancel sweep) lands between startRun's read of the workflow and its
      // insert: the second connection startRun takes (both statements are prepared, db/prepared.ts).
      let acquired = 0;
      const countingClient = new Proxy(db.client as { acquireConnection(): Promise<unknown> }, {
        get(target, prop) {
          if (prop === 'acquireConnection') {
            return async () => {
              if (++acquired === 2) {
                await deleteWorkflow(kept.ctx, userId, workflowId);
                expect(await cancelRunsOfDeletedWorkflow(kept.ctx, workflowId)).toBe(0); // the run is not stored yet
              }
              return target.acquireConnection();
            };
          }
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const racing = new Proxy(db, {
        get: (target, prop) => (prop === 'client' ? countingClient : Reflect.get(target, prop, target)),
      });
      const queue = kept.ctx.runs!.queue;
      const started = runService.startRun({ ...kept.ctx, db: racing }, userId, workflowId, { ticket: 'x' }, undefined);
      await expect(started).rejects.toMatchObject({ status: 404 });
      const [runId] = (await db('runs').where({ workflow_id: workflowId }).pluck('id')) as string[];
      expect(await store.findRun(db, runId!)).toMatchObject({ status: 'cancelled', error: CANCELLED_BY_DELETE });
      expect((await queue.jobState(runId!)).live).toBe(false);
    });
  });

  describe('one worker slot', () => {
    let single: TestServer;
    let client: ApiClient;
    beforeAll(async () => {
      single = await startTestServer({
        dialect,
        runs: true,
        env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3', RUN_CONCURRENCY: '1' },
      });
      client = createApiClient(single.baseUrl, { bearer: await apiKeyFor(single.ctx, 'erin') });
    });
    afterAll(async () => {
      await single?.close();
    });

    it('a run cancelled while queued never reaches the provider, though its job comes later (runs are claimed before any call out)', async () => {
      fake.replies = [{ kind: 'hang' }];
      const before = fake.requests.length;
      const workflowId = await createWorkflow(client, 'llama-3');
      const cancel = async (runId: string) =>
        (
          await client.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
            params: { path: { workflow_id: workflowId, run_id: runId } },
          })
        ).response.status;
      const busy = await startRun(client, workflowId, { ticket: 'hang' });
      await pollRun(
        client,
        workflowId,
        busy.id,
        (r) => r.status === 'running' && r.logs.some((s) => s.node_id === 'summarise'),
      );
      // The only slot is taken: this one waits in the queue, as this process stored it (handed over to its worker).
      const queued = await startRun(client, workflowId, { ticket: 'cancelled while queued' });
      expect(await cancel(queued.id)).toBe(200);
      expect(await cancel(busy.id)).toBe(200);
      // The slot takes the cancelled run's job, then this one's: once this one ends, the other's job was handled.
      const last = await pollRun(client, workflowId, (await startRun(client, workflowId, { ticket: 'last' })).id);
      expect(last.status).toBe('completed');
      expect(fake.requests.slice(before).map((r) => r.messages.at(-1)?.content)).toEqual(['hang', 'last']);
      expect(await getRun(client, workflowId, queued.id)).toMatchObject({
        status: 'cancelled',
        started_at: null,
        logs: [],
      });
    });
  });

  describe('run-level timeout', () => {
    let slow: TestServer;
    let client: ApiClient;
    beforeAll(async () => {
      slow = await startTestServer({
        dialect,
        runs: true,
        env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3', RUN_TIMEOUT_SECONDS: '1' },
      });
      client = createApiClient(slow.baseUrl, { bearer: await apiKeyFor(slow.ctx, 'carol') });
    });
    afterAll(async () => {
      await slow?.close();
    });

    it('fails a run still going after RUN_TIMEOUT_SECONDS with error.code timeout and the node id', async () => {
      fake.replies = [{ kind: 'hang' }];
      const before = fake.requests.length;
      const workflowId = await createWorkflow(client, 'llama-3');
      const run = await pollRun(client, workflowId, (await startRun(client, workflowId, { ticket: 'slow' })).id);
      expect(fake.requests.length - before).toBe(1);
      expect(run).toMatchObject({ status: 'failed', error: { code: 'timeout', node_id: 'summarise' } });
      expect(run.duration).toBeGreaterThanOrEqual(1);
      expect(run.duration).toBeLessThan(5);
      expect(run.logs.find((s) => s.node_id === 'summarise')?.status).toBe('cancelled');
    });
  });
});
