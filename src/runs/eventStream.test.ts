// The run event stream (GET .../runs/{run_id}/events) through a real HTTP server, a real store
// (PostgreSQL; MySQL too when TEST_MYSQL_URL is set) and a real pg-boss queue with its worker; the
// model provider is a local server speaking the OpenAI wire format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';

interface SseEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

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

/** The events of a text/event-stream body (WHATWG HTML 9.2.6), comments left out. */
function parseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line.startsWith('data:')))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .filter((line) => line.startsWith(`${name}:`))
          .map((line) => line.slice(name.length + 1).replace(/^ /, ''))
          .join('\n');
      return { id: field('id'), event: field('event'), data: JSON.parse(field('data')) as Record<string, unknown> };
    });
}

describe.each(testDialects())('run event stream on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let aliceKey: string;
  let bobKey: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    aliceKey = await apiKeyFor(server.ctx, 'alice');
    bobKey = await apiKeyFor(server.ctx, 'bob');
    alice = createApiClient(server.baseUrl, { bearer: aliceKey });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  async function startRun(model = 'llama-3'): Promise<{ workflowId: string; runId: string }> {
    const created = await alice.POST('/api/workflows', { body: { name: `wf ${Math.random()}`, ...seedGraph(model) } });
    const workflowId = created.data!.data.id;
    const run = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId } },
      body: { inputs: { ticket: 'export is broken' } },
    });
    return { workflowId, runId: run.data!.data.id };
  }

  const eventsUrl = (workflowId: string, runId: string) =>
    `${server.baseUrl}/api/workflows/${workflowId}/runs/${runId}/events`;
  const openStream = (workflowId: string, runId: string, headers: Record<string, string> = {}, key = aliceKey) =>
    fetch(eventsUrl(workflowId, runId), {
      headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream', ...headers },
    });

  it('streams a run from the worker picking it up to run.finished, numbered 1, 2, 3..., and ends', async () => {
    fake.replies = [{ kind: 'completion', content: 'slow answer', delayMs: 300 }];
    const { workflowId, runId } = await startRun();
    const response = await openStream(workflowId, runId);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('cache-control')).toContain('no-cache');
    const events = parseEvents(await response.text()); // the body ends: the server closed the stream
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
    expect(events.map((e) => `${e.event} ${String(e.data.node_id ?? e.data.status)}`)).toEqual([
      'run.status running',
      'node.started input',
      'node.finished input',
      'node.started summarise',
      'node.delta summarise',
      'node.delta summarise',
      'node.finished summarise',
      'node.started result',
      'node.finished result',
      'run.status completed',
      'run.finished completed',
    ]);
    // The provider streamed the answer (stream: true): one node.delta per chunk, in order.
    expect(fake.requests.at(-1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(events.filter((e) => e.event === 'node.delta').map((e) => e.data.text)).toEqual(['slow ', 'answer']);
    expect(events[6]!.data).toMatchObject({
      node_type: 'llm_call',
      status: 'completed',
      output: 'slow answer',
      error: null,
    });
    expect(events[6]!.data.usage).toMatchObject({ completion_tokens: 2 }); // from the stream's last chunk
    // Each node's start and end times, as its log in the run has them (a live page shows its timing from them).
    const run = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: runId } },
    });
    for (const step of run.data!.data.logs) {
      expect(
        events.find((e) => e.event === 'node.started' && e.data.node_id === step.node_id)!.data.started_at,
        step.node_id,
      ).toBe(step.started_at);
      expect(
        events.find((e) => e.event === 'node.finished' && e.data.node_id === step.node_id)!.data.finished_at,
        step.node_id,
      ).toBe(step.finished_at);
    }
    expect(events.at(-1)!.data).toMatchObject({
      id: runId,
      workflow_id: workflowId,
      status: 'completed',
      output: { result: 'slow answer' },
    });
    expect(events.at(-1)!.data).not.toHaveProperty('logs');
  });

  it('a provider that does not stream still works: its whole answer is one node.delta', async () => {
    fake.streams = false;
    try {
      fake.replies = [{ kind: 'completion', content: 'one two three' }];
      const { workflowId, runId } = await startRun();
      const events = parseEvents(await (await openStream(workflowId, runId)).text());
      expect(events.filter((e) => e.event === 'node.delta').map((e) => e.data)).toEqual([
        { node_id: 'summarise', text: 'one two three' },
      ]);
      expect(events.at(-1)!.data).toMatchObject({
        status: 'completed',
        output: { result: 'one two three' },
        usage: { completion_tokens: 3 },
      });
    } finally {
      fake.streams = true;
    }
  });

  it('a streamed answer that breaks off is tried again (issue 33): node.retry voids the chunks so far, and the run completes', async () => {
    fake.replies = [
      { kind: 'cut-stream', chunks: ['half ', 'an '] },
      { kind: 'completion', content: 'whole answer' },
    ];
    const { workflowId, runId } = await startRun();
    const events = parseEvents(await (await openStream(workflowId, runId)).text());
    const summarise = events
      .filter((e) => e.data.node_id === 'summarise')
      .map((e) => `${e.event}${e.data.text ? ` ${String(e.data.text)}` : ''}`);
    expect(summarise).toEqual([
      'node.started',
      'node.delta half ',
      'node.delta an ',
      'node.retry',
      'node.delta whole ',
      'node.delta answer',
      'node.finished',
    ]);
    expect(events.find((e) => e.event === 'node.retry')!.data).toMatchObject({
      node_id: 'summarise',
      attempt: 2,
      error: { code: 'provider_error' },
      delay_ms: expect.any(Number) as number,
    });
    expect(events.at(-1)!.data).toMatchObject({ status: 'completed', output: { result: 'whole answer' } });
    const run = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: runId } },
    });
    expect(run.data!.data.logs.find((l) => l.node_id === 'summarise')).toMatchObject({
      status: 'completed',
      attempts: 2,
    });
  });

  it('a provider that answers 500 and then the answer: one node.retry (attempt, error, delay) before node.finished, live and replayed', async () => {
    fake.replies = [
      { kind: 'error', status: 500, message: 'The server had an error while processing your request.' },
      { kind: 'completion', content: 'second time lucky' },
    ];
    const { workflowId, runId } = await startRun();
    const live = parseEvents(await (await openStream(workflowId, runId)).text());
    const replayed = parseEvents(await (await openStream(workflowId, runId)).text());
    expect(replayed).toEqual(live);
    const summarise = live.filter((e) => e.data.node_id === 'summarise').map((e) => e.event);
    expect(summarise.filter((e) => e !== 'node.delta')).toEqual(['node.started', 'node.retry', 'node.finished']);
    const retry = live.find((e) => e.event === 'node.retry')!.data;
    expect(retry).toMatchObject({
      node_id: 'summarise',
      attempt: 2,
      error: { code: 'provider_error', message: expect.stringContaining('processing your request') as string },
    });
    expect(retry.delay_ms).toBeGreaterThanOrEqual(0);
    expect(live.at(-1)!.data).toMatchObject({ status: 'completed', output: { result: 'second time lucky' } });
  });

  it('replays a finished run the same way, and Last-Event-ID resumes after that event with nothing lost or repeated', async () => {
    const { workflowId, runId } = await startRun('echo');
    const all = parseEvents(await (await openStream(workflowId, runId)).text());
    expect(all.at(-1)!.event).toBe('run.finished');
    const again = parseEvents(await (await openStream(workflowId, runId)).text());
    expect(again).toEqual(all);
    const resumed = parseEvents(await (await openStream(workflowId, runId, { 'Last-Event-ID': '3' })).text());
    expect(resumed).toEqual(all.slice(3));
  });

  it('a live stream ends with run.finished when another request cancels the run', async () => {
    fake.replies = [{ kind: 'hang' }];
    const { workflowId, runId } = await startRun();
    const response = await openStream(workflowId, runId);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('node.started\ndata: {"node_id":"summarise"')) text += (await reader.read()).value ?? '';
    await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
      params: { path: { workflow_id: workflowId, run_id: runId } },
    });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const events = parseEvents(text);
    expect(events.at(-1)).toMatchObject({
      event: 'run.finished',
      data: { status: 'cancelled', error: { code: 'cancelled' } },
    });
    expect(events.at(-2)).toMatchObject({ event: 'run.status', data: { status: 'cancelled' } });
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    // Every node has its node.finished: the one under way cancelled, the one after it never started.
    const finished = events.filter((e) => e.event === 'node.finished').map((e) => e.data);
    expect(finished.map((d) => [d.node_id, d.status])).toEqual([
      ['input', 'completed'],
      ['summarise', 'cancelled'],
      ['result', 'not_started'],
    ]);
    expect(finished[1]).toMatchObject({
      node_type: 'llm_call',
      finished_at: expect.any(String),
      error: { code: 'cancelled', node_id: 'summarise' },
    });
    expect(finished[2]).toMatchObject({ node_type: 'text_output', finished_at: null, error: null });
  });

  it('answers as getRun does: 404 problem+json for another user run or an unknown one, 401 without a key, 400 for a malformed Last-Event-ID', async () => {
    const { workflowId, runId } = await startRun('echo');
    const foreign = await openStream(workflowId, runId, {}, bobKey);
    expect(foreign.status).toBe(404);
    expect(foreign.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await foreign.json()).toMatchObject({ status: 404 });
    expect((await openStream(workflowId, 'run_unknown')).status).toBe(404);
    const anonymous = await fetch(eventsUrl(workflowId, runId));
    expect(anonymous.status).toBe(401);
    const malformed = await openStream(workflowId, runId, { 'Last-Event-ID': 'abc' });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('a run that ended before events were stored (older than the stream) still ends its stream with run.finished', async () => {
    const { workflowId, runId } = await startRun('echo');
    await parseEvents(await (await openStream(workflowId, runId)).text());
    await server.ctx.db('run_events').where({ run_id: runId }).delete();
    const events = parseEvents(await (await openStream(workflowId, runId)).text());
    expect(events).toEqual([
      { id: '1', event: 'run.finished', data: expect.objectContaining({ id: runId, status: 'completed' }) },
    ]);
    // Resuming after that end (or beyond it) gets nothing new: no end made up again.
    for (const lastEventId of ['1', '7']) {
      const resumed = await openStream(workflowId, runId, { 'Last-Event-ID': lastEventId });
      expect(resumed.status).toBe(200);
      expect(parseEvents(await resumed.text())).toEqual([]);
    }
  });

  it('Last-Event-ID at or past the end of an ended run returns nothing new and ends cleanly (issue 33: not a made-up event 13 after 12)', async () => {
    const { workflowId, runId } = await startRun('echo');
    const all = parseEvents(await (await openStream(workflowId, runId)).text());
    const last = Number(all.at(-1)!.id);
    for (const lastEventId of [String(last), String(last + 1), '50']) {
      const resumed = await openStream(workflowId, runId, { 'Last-Event-ID': lastEventId });
      expect(resumed.status).toBe(200);
      expect(parseEvents(await resumed.text()), `Last-Event-ID ${lastEventId}`).toEqual([]);
    }
    // One before the end still gets the end.
    const before = parseEvents(
      await (await openStream(workflowId, runId, { 'Last-Event-ID': String(last - 1) })).text(),
    );
    expect(before.map((e) => [e.id, e.event])).toEqual([[String(last), 'run.finished']]);
  });
});
