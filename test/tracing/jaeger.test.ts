// Tracing against a real collector: Jaeger v1.76.0 (scripts/jaeger.sh builds it from the Go module
// proxy), the API (`src/main.ts`, running no runs) and a separate worker (`src/worker.ts`), both
// started as `npm start` and `npm run worker` start them, with the standard OTEL_* variables
// pointing at Jaeger. A run with a sub-workflow and a map, whose first provider call fails (500)
// and is retried, started with the caller's `traceparent`, is read back through Jaeger's query API.
// On each store: PostgreSQL, and MariaDB (with a PostgreSQL queue) when TEST_MYSQL_URL is set.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import { createTestDb, testDialects, type TestDb } from '../support/db.ts';
import { jaegerBinary, startJaeger, type Jaeger } from '../support/jaeger.ts';
import { replyGate, startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI.ts';
import { freePort, waitForReady } from '../support/processes.ts';
import { TEST_SECRETS_KEY } from '../support/secrets.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

const jaeger = jaegerBinary();

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
  processID: string;
}
interface JaegerTrace {
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

const tag = (span: JaegerSpan, key: string) => span.tags.find((t) => t.key === key)?.value;
const parentOf = (span: JaegerSpan) => span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;

/** A process started as its npm script starts it (`--import` of the tracing preload), its output kept. */
function startProcess(entry: string, env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  let text = '';
  const child = spawn('sh', ['scripts/node.sh', '--import', './src/ops/tracing/register.ts', entry], {
    cwd: root,
    env,
  });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  return { child, output: () => text };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!jaeger.bin).each(testDialects())('tracing into Jaeger, store on %s', (dialect) => {
  const children: ChildProcess[] = [];
  let testDb: TestDb;
  let queueDb: TestDb | undefined;
  let fake: FakeOpenAI;
  let client: ApiClient;
  /** Saves a workflow as the test's user; its id. */
  const save = async (name: string, nodes: unknown[], edges: unknown[]) => {
    const { data, error } = await client.POST('/api/workflows', { body: { name, nodes, edges } as never });
    if (!data) throw new Error(JSON.stringify(error));
    return data.data.id;
  };
  let workerOutput: () => string;
  let queryUrl: string;
  let collector: Jaeger | undefined;
  // What an http_request node calls: it keeps the traceparent each request came with.
  const seen: string[] = [];
  // The traceparents run-ended callbacks came with (the same site, path /callback).
  const delivered: string[] = [];
  let site: Server;
  let siteUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    const { BASE_URL: _vite, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
    collector = await startJaeger(jaeger.bin!);
    queryUrl = collector.queryUrl;

    site = createServer((req, res) => {
      (req.url === '/callback' ? delivered : seen).push(String(req.headers.traceparent));
      res.end('ok');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/page`;
    testDb = await createTestDb(dialect);
    // A MariaDB store takes its queue from a PostgreSQL database (QUEUE_URL).
    if (dialect === 'mysql') queueDb = await createTestDb('pg', { migrate: false });
    fake = await startFakeOpenAI();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      ...inherited,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: testDb.url,
      ...(queueDb ? { QUEUE_URL: queueDb.url } : {}),
      SECRETS_KEY: TEST_SECRETS_KEY,
      MODEL_PROVIDER_BASE_URL: fake.baseUrl,
      MODEL_PROVIDER_MODELS: 'llama-3',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpUrl,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      WORKFLOW_HTTP_ALLOW_HOSTS: '127.0.0.1',
    };
    const api = startProcess('src/main.ts', {
      ...env,
      RUN_WORKER: 'false',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: baseUrl,
    });
    children.push(api.child);
    const worker = startProcess('src/worker.ts', env);
    workerOutput = worker.output;
    children.push(worker.child);
    await waitForReady(`${baseUrl}/readyz`, api.child, api.output);
    await until(`the worker's start\n${worker.output()}`, async () =>
      worker.output().includes('worker started') ? true : undefined,
    );

    const user = await createUser({ db: testDb.db }, { login: 'tracy', password: 'correct horse battery' });
    const { token } = await createAccessToken(
      { db: testDb.db },
      { userId: user.id, namespace: 'tracy', name: 'k', usageScenario: 'paid', permissions: ['workflows'] },
    );
    client = createApiClient(baseUrl, { bearer: token });
  }, 16 * 60_000);

  afterAll(async () => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((resolve) => {
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => resolve(clearTimeout(force)));
      });
    }
    await collector?.stop();
    await fake?.close();
    site?.close();
    await testDb?.destroy();
    await queueDb?.destroy();
  }, 60_000);

  it(
    'one trace from the caller through the API and the worker: run, nodes, sub-workflow, map items, provider attempts',
    { timeout: 120_000 },
    async () => {
      const callee = await save(
        'summarise',
        [
          { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
          {
            id: 'ask',
            type: 'llm_call',
            config: { model: 'llama-3', retry: { max_attempts: 3, backoff_seconds: 0.01 } },
          },
          { id: 'out', type: 'text_output', config: { format: 'plain' } },
        ],
        [
          { from: 'in', to: 'ask' },
          { from: 'ask', to: 'out' },
        ],
      );
      const caller = await save(
        'caller',
        [
          { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
          { id: 'call', type: 'workflow', config: { workflow_id: callee, inputs: { ticket: '{{ inputs.doc }}' } } },
          { id: 'parts', type: 'split', config: { by: 'separator', separator: ';' } },
          { id: 'each', type: 'map', config: { workflow_id: callee, item_variable: 'ticket', concurrency: 1 } },
          { id: 'whole', type: 'text_output', config: { format: 'plain' } },
          { id: 'items', type: 'text_output', config: { format: 'json' } },
        ],
        [
          { from: 'doc', to: 'call' },
          { from: 'call', to: 'whole' },
          { from: 'doc', to: 'parts' },
          { from: 'parts', to: 'each' },
          { from: 'each', to: 'items' },
        ],
      );
      // The first provider call fails (a 500) and is retried; the others answer.
      fake.replies = [{ kind: 'error', status: 500, message: 'The server had an error' }];

      const traceId = randomBytes(16).toString('hex');
      const callerSpan = randomBytes(8).toString('hex');
      const { data, error } = await client.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: caller }, header: { Prefer: 'wait=60' } },
        body: { inputs: { doc: 'a;b' } },
        headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
      });
      if (!data) throw new Error(JSON.stringify(error));
      expect(data.data).toMatchObject({ status: 'completed' });
      expect(fake.requests.length).toBe(4); // the sub-workflow's call twice (a retry), one per map item

      // Read back once every span has arrived: the API's request, and the worker's run with 4 provider attempts.
      const trace = await until(`the trace in Jaeger\n${collector!.output()}`, async () => {
        const res = await fetch(`${queryUrl}/api/traces/${traceId}`);
        if (!res.ok) return undefined;
        const [found] = ((await res.json()) as { data: JaegerTrace[] }).data;
        const chats = found?.spans.filter((s) => s.operationName === 'chat llama-3') ?? [];
        const run = found?.spans.find((s) => s.operationName === 'run');
        // The request's span ends last, once its answer (which waited for the run) is sent.
        const request = found?.spans.some((s) => parentOf(s) === callerSpan && tag(s, 'span.kind') === 'server');
        return chats.length === 4 && run && request && found!.spans.some((s) => s.operationName === 'node items')
          ? found
          : undefined;
      });
      const spans = trace.spans;
      // TRACE_DUMP=<file>: the trace as Jaeger answered it, to look at.
      if (process.env.TRACE_DUMP)
        (await import('node:fs')).writeFileSync(process.env.TRACE_DUMP, JSON.stringify(trace));
      const byId = new Map(spans.map((s) => [s.spanID, s]));
      const services = new Set(spans.map((s) => trace.processes[s.processID]!.serviceName));
      expect(services).toEqual(new Set(['openauth-workflows', 'openauth-workflows-worker']));
      expect(spans.every((s) => s.traceID === traceId)).toBe(true);

      // The API's request continues the caller's span; the run continues the request's trace in the worker.
      const server = spans.find((s) => parentOf(s) === callerSpan && tag(s, 'span.kind') === 'server');
      expect(server?.operationName).toMatch(/^POST \/api\/workflows\/:workflow_id\/run$/);
      const run = spans.find((s) => s.operationName === 'run')!;
      expect(trace.processes[run.processID]!.serviceName).toBe('openauth-workflows-worker');
      expect(tag(run, 'run.id')).toBe(data.data.id);
      expect(tag(run, 'run.status')).toBe('completed');
      const ancestors = (span: JaegerSpan): string[] => {
        const up = parentOf(span);
        const parent = up ? byId.get(up) : undefined;
        return parent ? [parent.operationName, ...ancestors(parent)] : [];
      };
      expect(ancestors(run)).toContain(server!.operationName);

      // Every node of the run under it, with its type and status.
      const nodes = spans.filter((s) => s.operationName.startsWith('node '));
      for (const id of ['doc', 'call', 'parts', 'each', 'whole', 'items']) {
        const node = nodes.find((s) => s.operationName === `node ${id}` && parentOf(s) === run.spanID);
        expect(node, `node ${id} under the run`).toBeDefined();
        expect(tag(node!, 'node.id')).toBe(id);
        expect(tag(node!, 'status')).toBe('completed');
        expect(tag(node!, 'attempt')).toBe(1);
      }
      // The sub-workflow's nodes inside its workflow node; each map item's inside the map's.
      const call = nodes.find((s) => s.operationName === 'node call')!;
      const each = nodes.find((s) => s.operationName === 'node each')!;
      const asks = nodes.filter((s) => s.operationName === 'node ask');
      expect(
        asks.filter((s) => ancestors(s)[0] === 'node call').length +
          asks.filter((s) => parentOf(s) === call.spanID).length,
      ).toBeGreaterThanOrEqual(1);
      expect(asks.filter((s) => ancestors(s).includes('node each'))).toHaveLength(2);
      expect(asks.filter((s) => ancestors(s).includes('node call'))).toHaveLength(1);
      expect(each.spanID).not.toBe(call.spanID);

      // Provider attempts: GenAI client spans under their node, the failed one with its error, the others with tokens.
      const chats = spans.filter((s) => s.operationName === 'chat llama-3');
      for (const chat of chats) {
        expect(byId.get(parentOf(chat)!)?.operationName).toBe('node ask');
        expect(tag(chat, 'span.kind')).toBe('client');
        expect(tag(chat, 'gen_ai.operation.name')).toBe('chat');
        expect(tag(chat, 'gen_ai.request.model')).toBe('llama-3');
        expect(tag(chat, 'gen_ai.provider.name')).toBe('openai');
      }
      const failed = chats.filter((s) => tag(s, 'error') === true);
      expect(failed).toHaveLength(1);
      expect(tag(failed[0]!, 'error.type')).toBe('provider_error');
      expect(tag(failed[0]!, 'http.response.status_code')).toBe(500);
      const answered = chats.filter((s) => tag(s, 'error') !== true);
      expect(answered).toHaveLength(3);
      for (const chat of answered) {
        expect(tag(chat, 'gen_ai.response.model')).toBe('llama-3');
        expect(tag(chat, 'gen_ai.usage.input_tokens')).toEqual(expect.any(Number));
        expect(tag(chat, 'gen_ai.usage.output_tokens')).toEqual(expect.any(Number));
        expect(tag(chat, 'gen_ai.response.finish_reasons')).toBeDefined();
      }
      // The retried attempt is the failed one's sibling, under the same node.
      const retried = answered.find((s) => parentOf(s) === parentOf(failed[0]!));
      expect(tag(retried!, 'attempt')).toBe(2);
      // Each provider attempt's HTTP request is a client span that sent `traceparent` on (the fake saw one).
      expect(spans.filter((s) => s.operationName === 'POST' && tag(s, 'span.kind') === 'client').length).toBe(4);
      // Nothing secret on any span: no prompt, no Authorization header, no API key.
      // The worker's log line of the run's end carries the run span's trace and span ids.
      const ended = workerOutput()
        .split('\n')
        .find((l) => l.includes('"run ended"') && l.includes(data.data.id));
      expect(JSON.parse(ended!)).toMatchObject({ trace_id: traceId, span_id: run.spanID });
      const text = JSON.stringify(spans);
      expect(text).not.toMatch(/Bearer|authorization/i);
      expect(text).not.toContain('a;b');
    },
  );

  it(
    'a node span is exported when its node ends, while its run still goes on (the batch processor)',
    { timeout: 60_000 },
    async () => {
      const { data: saved } = await client.POST('/api/workflows', {
        body: {
          name: 'held',
          nodes: [
            { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
            { id: 'fetch', type: 'http_request', config: { url: siteUrl } },
            { id: 'frame', type: 'template', config: { template: '<{{ inputs.ticket }}>' } },
            { id: 'ask', type: 'llm_call', config: { model: 'llama-3' } },
            { id: 'out', type: 'text_output', config: { format: 'plain' } },
          ],
          edges: [
            { from: 'in', to: 'fetch' },
            { from: 'fetch', to: 'frame' },
            { from: 'frame', to: 'ask' },
            { from: 'ask', to: 'out' },
          ],
        },
      });
      const gate = replyGate();
      fake.replies = [{ kind: 'completion', content: 'late', until: gate.held }];
      const traceId = randomBytes(16).toString('hex');
      const { data } = await client.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: saved!.data.id } },
        body: { inputs: { ticket: 'x' } },
        headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      });
      const runId = data!.data.id;
      try {
        const found = await until('the span of node frame in Jaeger', async () => {
          const res = await fetch(`${queryUrl}/api/traces/${traceId}`);
          const [trace] = res.ok ? ((await res.json()) as { data: JaegerTrace[] }).data : [];
          return trace?.spans.some((s) => s.operationName === 'node frame') ? trace : undefined;
        });
        const frame = found.spans.find((s) => s.operationName === 'node frame')!;
        expect(tag(frame, 'status')).toBe('completed');
        // The http_request node's call: a client span under its node, whose context the site received.
        const node = found.spans.find((s) => s.operationName === 'node fetch')!;
        const get = found.spans.find((s) => parentOf(s) === node.spanID && tag(s, 'span.kind') === 'client')!;
        expect(get.operationName).toBe('GET');
        expect(seen.at(-1)).toBe(`00-${traceId}-${get.spanID}-01`);
        const { data: now } = await client.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
          params: { path: { workflow_id: saved!.data.id, run_id: runId } },
        });
        expect(now!.data.status).toBe('running'); // its provider call is still held
      } finally {
        gate.release();
      }
    },
  );

  it("a run a trigger URL starts continues the trace of the hook's sender", { timeout: 60_000 }, async () => {
    const { data: saved } = await client.POST('/api/workflows', {
      body: {
        name: 'hooked',
        nodes: [
          { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
          { id: 'out', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [{ from: 'in', to: 'out' }],
      },
    });
    const { data: trigger, error } = await client.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: saved!.data.id } },
      body: { inputs: { ticket: '{{ body.t }}' } },
    });
    if (!trigger) throw new Error(JSON.stringify(error));
    const traceId = randomBytes(16).toString('hex');
    const sender = randomBytes(8).toString('hex');
    const res = await fetch(trigger.data.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${sender}-01` },
      body: JSON.stringify({ t: 'from a hook' }),
    });
    expect(res.status).toBe(202);
    const runId = ((await res.json()) as { data: { id: string } }).data.id;
    const found = await until("the hook's run in Jaeger", async () => {
      const answer = await fetch(`${queryUrl}/api/traces/${traceId}`);
      const [trace] = answer.ok ? ((await answer.json()) as { data: JaegerTrace[] }).data : [];
      const whole = ['node out', 'run'].every((name) => trace?.spans.some((s) => s.operationName === name));
      return whole && trace!.spans.some((s) => parentOf(s) === sender) ? trace : undefined;
    });
    const run = found.spans.find((s) => s.operationName === 'run')!;
    expect(tag(run, 'run.id')).toBe(runId);
    const hook = found.spans.find((s) => parentOf(s) === sender)!;
    expect(tag(hook, 'span.kind')).toBe('server');
    expect(tag(hook, 'url.path')).toMatch(/^\/hooks\/.{12}\[redacted\]$/); // the token is the credential
    expect(JSON.stringify(found)).not.toContain(trigger.data.url.split('/hooks/')[1]!);
  });

  /** The trace `traceId` once `ready` holds of it. */
  const traceOf = (traceId: string, ready: (trace: JaegerTrace) => boolean) =>
    until(`trace ${traceId} in Jaeger`, async () => {
      const answer = await fetch(`${queryUrl}/api/traces/${traceId}`);
      const [trace] = answer.ok ? ((await answer.json()) as { data: JaegerTrace[] }).data : [];
      return trace && ready(trace) ? trace : undefined;
    });
  const newTraceparent = () => {
    const traceId = randomBytes(16).toString('hex');
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  };
  const runSpan = (trace: JaegerTrace, runId: string) =>
    trace.spans.find((s) => s.operationName === 'run' && tag(s, 'run.id') === runId);

  it(
    "a run resumed at an approval, and a run's retry, continue the request that resumed them, linked to the run's first trace",
    { timeout: 90_000 },
    async () => {
      const { data: saved } = await client.POST('/api/workflows', {
        body: {
          name: 'later',
          nodes: [
            { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
            { id: 'ok', type: 'approval', config: { message: 'OK? {{ inputs.ticket }}' } },
            { id: 'ask', type: 'llm_call', config: { model: 'llama-3' } },
            { id: 'out', type: 'text_output', config: { format: 'plain' } },
          ],
          edges: [
            { from: 'in', to: 'ok' },
            { from: 'ok', to: 'ask' },
            { from: 'ask', to: 'out' },
          ],
        },
      });
      const workflowId = saved!.data.id;
      const first = newTraceparent();
      const { data: started } = await client.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=30' } },
        body: { inputs: { ticket: 't' } },
        headers: { traceparent: first.traceparent },
      });
      const runId = started!.data.id;
      expect(started!.data.status).toBe('waiting');
      const original = await traceOf(first.traceId, (t) => !!runSpan(t, runId));
      expect(tag(runSpan(original, runId)!, 'run.status')).toBe('waiting');

      // Resumed by a later request: its own trace, linked to the first (whose spans have ended).
      fake.replies = [{ kind: 'error', status: 400, message: 'bad request' }]; // the run then fails
      const resume = newTraceparent();
      const answered = await client.POST('/api/workflows/{workflow_id}/runs/{run_id}/resume', {
        params: { path: { workflow_id: workflowId, run_id: runId } },
        body: { answer: { approved: true } },
        headers: { traceparent: resume.traceparent },
      });
      expect(answered.response.status).toBe(200);
      const resumed = await traceOf(
        resume.traceId,
        (t) => !!runSpan(t, runId) && t.spans.some((s) => s.operationName === 'node ask'),
      );
      const link = runSpan(resumed, runId)!.references.find((r) => r.refType === 'FOLLOWS_FROM');
      expect(link?.traceID).toBe(first.traceId);
      expect(original.spans.some((s) => s.spanID === link!.spanID)).toBe(true); // a span of the first trace
      expect(tag(runSpan(resumed, runId)!, 'run.status')).toBe('failed');

      // Its retry: a new run in the retrying request's trace, linked to the retried run's first trace.
      const retry = newTraceparent();
      const { data: retried, error } = await client.POST('/api/workflows/{workflow_id}/runs/{run_id}/retry', {
        params: { path: { workflow_id: workflowId, run_id: runId } },
        body: {},
        headers: { traceparent: retry.traceparent },
      });
      if (!retried) throw new Error(JSON.stringify(error));
      const again = await traceOf(retry.traceId, (t) => !!runSpan(t, retried.data.id));
      const retriedLink = runSpan(again, retried.data.id)!.references.find((r) => r.refType === 'FOLLOWS_FROM');
      expect(retriedLink?.traceID).toBe(first.traceId);
    },
  );

  it(
    "a run-ended callback's delivery is in the run's trace: the receiver gets its traceparent",
    { timeout: 60_000 },
    async () => {
      const { data: saved } = await client.POST('/api/workflows', {
        body: {
          name: 'notified',
          nodes: [
            { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
            { id: 'out', type: 'text_output', config: { format: 'plain' } },
          ],
          edges: [{ from: 'in', to: 'out' }],
        },
      });
      const workflowId = saved!.data.id;
      const { data: callback, error } = await client.POST('/api/workflows/{workflow_id}/callbacks', {
        params: { path: { workflow_id: workflowId } },
        body: { url: siteUrl.replace('/page', '/callback') },
      });
      if (!callback) throw new Error(JSON.stringify(error));
      const caller = newTraceparent();
      const { data: run } = await client.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=30' } },
        body: { inputs: { ticket: 't' } },
        headers: { traceparent: caller.traceparent },
      });
      expect(run!.data.status).toBe('completed');
      const received = await until('the callback', async () =>
        delivered.find((t) => t.startsWith(`00-${caller.traceId}-`)),
      );
      // The span the receiver was told of: the delivery's client request, under the delivery's span.
      const trace = await traceOf(caller.traceId, (t) => t.spans.some((s) => received.includes(s.spanID)));
      const post = trace.spans.find((s) => received === `00-${caller.traceId}-${s.spanID}-01`)!;
      expect(tag(post, 'span.kind')).toBe('client');
      const delivery = trace.spans.find((s) => s.spanID === parentOf(post))!;
      expect(delivery.operationName).toBe('callback delivery');
      expect(tag(delivery, 'run.id')).toBe(run!.data.id);
      expect(tag(delivery, 'callback.id')).toBe(callback.data.id);
    },
  );

  it(
    "an agent's tool calls are spans inside its node's: a workflow tool's nodes, an http tool's request",
    { timeout: 60_000 },
    async () => {
      const callee = await save(
        'tool',
        [
          { id: 'x', type: 'text_input', config: { variable: 'x' } },
          { id: 'shout', type: 'template', config: { template: '{{ inputs.x }}!' } },
          { id: 'r', type: 'text_output', config: { format: 'plain' } },
        ],
        [
          { from: 'x', to: 'shout' },
          { from: 'shout', to: 'r' },
        ],
      );
      const agent = await save(
        'agent',
        [
          { id: 'q', type: 'text_input', config: { variable: 'question' } },
          {
            id: 'bot',
            type: 'agent',
            config: {
              model: 'llama-3',
              prompt: '{{ inputs.question }}',
              tools: [
                { kind: 'workflow', name: 'loud', description: 'shouts', workflow_id: callee, version: 1 },
                {
                  kind: 'http',
                  name: 'fetch',
                  description: 'fetches',
                  url: siteUrl,
                  parameters: { type: 'object', properties: { n: { type: 'integer' } } },
                },
              ],
            },
          },
          { id: 'out', type: 'text_output', config: { format: 'plain' } },
        ],
        [
          { from: 'q', to: 'bot' },
          { from: 'bot', to: 'out' },
        ],
      );
      fake.replies = [
        {
          kind: 'tool-calls',
          calls: [
            { id: 'c1', name: 'loud', arguments: '{"x":"hi"}' },
            { id: 'c2', name: 'fetch', arguments: '{"n":1}' },
          ],
        },
        { kind: 'completion', content: 'done' },
      ];
      const caller = newTraceparent();
      const { data: run, error } = await client.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: agent }, header: { Prefer: 'wait=30' } },
        body: { inputs: { question: 'go' } },
        headers: { traceparent: caller.traceparent },
      });
      expect(run?.data.status, JSON.stringify(error ?? run?.data.error)).toBe('completed');
      const trace = await traceOf(caller.traceId, (t) => t.spans.some((s) => s.operationName === 'node out'));
      const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
      const bot = trace.spans.find((s) => s.operationName === 'node bot')!;
      const loud = trace.spans.find((s) => s.operationName === 'execute_tool loud')!;
      const fetchTool = trace.spans.find((s) => s.operationName === 'execute_tool fetch')!;
      for (const tool of [loud, fetchTool]) {
        expect(parentOf(tool)).toBe(bot.spanID);
        expect(tag(tool, 'gen_ai.operation.name')).toBe('execute_tool');
      }
      expect(tag(loud, 'gen_ai.tool.call.id')).toBe('c1');
      // The workflow tool's nodes inside its tool span; the http tool's request under its own.
      const shout = trace.spans.find((s) => s.operationName === 'node shout')!;
      const chain = (span: JaegerSpan): string[] => {
        const up = byId.get(parentOf(span) ?? '');
        return up ? [up.spanID, ...chain(up)] : [];
      };
      expect(chain(shout)).toContain(loud.spanID);
      const get = trace.spans.find((s) => parentOf(s) === fetchTool.spanID && tag(s, 'span.kind') === 'client')!;
      expect(get.operationName).toBe('GET');
      expect(seen).toContain(`00-${caller.traceId}-${get.spanID}-01`);
    },
  );
});

// Without Go (or when the build fails): one line saying why, as the skipped test's name.
if (!jaeger.bin)
  describe('tracing into Jaeger', () => {
    it.skip(`skipped: ${jaeger.why}`, () => {});
  });
