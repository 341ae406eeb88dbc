// What a trigger URL takes: webhook senders' own bodies (JSON of any shape, forms, text), read
// into a workflow's typed inputs, through a real HTTP server, a real store (PostgreSQL; MariaDB
// too when TEST_MYSQL_URL is set) and a real pg-boss queue with an in-process worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type Graph = Pick<Schemas['WorkflowCreate'], 'nodes' | 'edges'>;
type RunDetail = Schemas['RunDetail'];

/** One `object` input `event`, whose fields a template reads. */
const objectGraph: Graph = {
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'event', type: 'object' } },
    {
      id: 'say',
      type: 'template',
      config: { template: '{{ inputs.event.repository.full_name }} by {{ inputs.event.pusher.name }}' },
    },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'say' },
    { from: 'say', to: 'result' },
  ],
};

/** Two inputs, `ticket` (string) and `priority` (integer). */
const twoInputGraph: Graph = {
  nodes: [
    { id: 'ticket', type: 'text_input', config: { variable: 'ticket' } },
    { id: 'priority', type: 'text_input', config: { variable: 'priority', type: 'integer' } },
    { id: 'say', type: 'template', config: { template: '{{ inputs.ticket }} at {{ inputs.priority }}' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'ticket', to: 'say' },
    { from: 'priority', to: 'say' },
    { from: 'say', to: 'result' },
  ],
};

/** A GitHub push event, trimmed: nested objects, arrays, numbers, booleans and nulls. */
const githubPush = {
  ref: 'refs/heads/main',
  before: '6113728f27ae82c7b1a177c8d03f9e96e0adf246',
  repository: { id: 1296269, full_name: 'octocat/Hello-World', private: false, owner: { login: 'octocat' } },
  pusher: { name: 'octocat', email: null },
  commits: [{ id: '0d1a26e6', message: 'Update README', added: [], modified: ['README.md'] }],
};

const BODY_LIMIT = 4096;

describe.each(testDialects())('trigger URL bodies on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true, env: { BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function triggerOf(
    graph: Graph,
    inputs?: Record<string, string>,
  ): Promise<{ url: string; workflowId: string }> {
    const made = await alice.POST('/api/workflows', { body: { name: 'hooked', ...graph } });
    if (!made.data) throw new Error(`create failed: ${JSON.stringify(made.error)}`);
    const workflowId = made.data.data.id;
    const { data, error } = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
      body: { name: 'sender', ...(inputs ? { inputs } : {}) },
    });
    if (!data) throw new Error(`trigger failed: ${JSON.stringify(error)}`);
    return { url: data.data.url, workflowId };
  }

  /** A POST as a sender makes it, waiting for the run's end. */
  const send = (url: string, contentType: string, body: string) =>
    fetch(url, { method: 'POST', headers: { 'content-type': contentType, Prefer: 'wait=10' }, body });

  const runsOf = async (workflowId: string) =>
    (await alice.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: workflowId } } })).data!.meta
      .total;

  it('gives a GitHub-style JSON body, nested and with any fields, whole to an object input', async () => {
    const { url } = await triggerOf(objectGraph);
    const res = await send(url, 'application/json', JSON.stringify(githubPush));
    expect(res.status).toBe(200);
    const run = ((await res.json()) as { data: RunDetail }).data;
    expect(run).toMatchObject({ status: 'completed', output: { result: 'octocat/Hello-World by octocat' } });
    expect(run.input_values).toEqual({ event: githubPush });
  });

  it('gives a form body to an object input as an object of strings', async () => {
    const { url } = await triggerOf(objectGraph);
    const form = new URLSearchParams({ repository: 'x', pusher: 'y', 'extra field': 'a&b=c' }).toString();
    const res = await send(url, 'application/x-www-form-urlencoded', form);
    expect(res.status).toBe(200);
    const run = ((await res.json()) as { data: RunDetail }).data;
    expect(run.input_values).toEqual({ event: { repository: 'x', pusher: 'y', 'extra field': 'a&b=c' } });
  });

  it('gives a string input the body as sent: JSON text byte for byte, a form or plain text as is', async () => {
    const { url } = await triggerOf(seedGraph('echo'));
    const jsonText = '{"action": "opened",\n "issue": {"number": 7, "title": "Safari"}}';
    const json = await send(url, 'application/json', jsonText);
    expect(json.status).toBe(200);
    expect(((await json.json()) as { data: RunDetail }).data).toMatchObject({
      inputs: { ticket: jsonText },
      output: { result: jsonText },
    });
    const text = await send(url, 'text/plain', 'Export fails on Safari');
    expect(text.status).toBe(200);
    expect(((await text.json()) as { data: RunDetail }).data.inputs).toEqual({ ticket: 'Export fails on Safari' });
    const latin1 = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=iso-8859-1', Prefer: 'wait=10' },
      body: Buffer.from('Caf\u00e9 cr\u00e8me', 'latin1'),
    });
    expect(((await latin1.json()) as { data: RunDetail }).data.inputs).toEqual({ ticket: 'Caf\u00e9 cr\u00e8me' });
    const form = await send(url, 'application/x-www-form-urlencoded', 'text=Export+fails&channel=C1');
    expect(form.status).toBe(200);
    expect(((await form.json()) as { data: RunDetail }).data.inputs).toEqual({
      ticket: 'text=Export+fails&channel=C1',
    });
  });

  it('reads a body that is exactly the inputs as before, as JSON or as a form', async () => {
    const { url } = await triggerOf(seedGraph('echo'));
    const json = await send(url, 'application/json', JSON.stringify({ ticket: 'as before' }));
    expect(((await json.json()) as { data: RunDetail }).data.inputs).toEqual({ ticket: 'as before' });
    const form = await send(url, 'application/x-www-form-urlencoded', 'ticket=from+a+form');
    expect(((await form.json()) as { data: RunDetail }).data.inputs).toEqual({ ticket: 'from a form' });
  });

  it('takes the fields of several inputs from a body with others, a form typed per input', async () => {
    const { url } = await triggerOf(twoInputGraph);
    const json = await send(url, 'application/json', JSON.stringify({ ticket: 'Safari', priority: 2, sender: 'x' }));
    expect(json.status).toBe(200);
    expect(((await json.json()) as { data: RunDetail }).data).toMatchObject({
      input_values: { ticket: 'Safari', priority: 2 },
      output: { result: 'Safari at 2' },
    });
    const form = await send(url, 'application/x-www-form-urlencoded', 'ticket=Safari&priority=3&token=abc');
    expect(form.status).toBe(200);
    expect(((await form.json()) as { data: RunDetail }).data.output).toEqual({ result: 'Safari at 3' });
  });

  it('refuses a body that does not fit with a problem naming the input, and starts nothing', async () => {
    const object = await triggerOf(objectGraph);
    const list = await send(object.url, 'application/json', '[1, 2]');
    expect(list.status).toBe(400);
    expect(await list.json()).toMatchObject({
      code: 'invalid_run_inputs',
      errors: [{ pointer: '/body/inputs/event', message: 'must be an object' }],
    });
    const text = await send(object.url, 'text/plain', 'not an object');
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({ code: 'invalid_run_inputs' });
    expect(await runsOf(object.workflowId)).toBe(0);

    const two = await triggerOf(twoInputGraph);
    const missing = await send(two.url, 'application/json', JSON.stringify({ ticket: 'Safari', sender: 'x' }));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      code: 'invalid_run_inputs',
      errors: [{ pointer: '/body/inputs/priority' }],
    });
    const mistyped = await send(two.url, 'application/x-www-form-urlencoded', 'ticket=a&priority=high');
    expect(mistyped.status).toBe(400);
    expect(await mistyped.json()).toMatchObject({
      errors: [{ pointer: '/body/inputs/priority', message: 'must be an integer' }],
    });
    const repeated = await send(two.url, 'application/x-www-form-urlencoded', 'ticket=a&ticket=b&priority=1');
    expect(repeated.status).toBe(400);
    expect(JSON.stringify(await repeated.json())).toContain('ticket');
    expect(await runsOf(two.workflowId)).toBe(0);
  });

  it('takes any JSON value: a bare number, string or null is the one input of its type, or names what is missing', async () => {
    const count: Graph = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'count', type: 'integer' } },
        { id: 'say', type: 'template', config: { template: 'n={{ inputs.count }}' } },
        { id: 'result', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'in', to: 'say' },
        { from: 'say', to: 'result' },
      ],
    };
    const one = await triggerOf(count);
    const number = await send(one.url, 'application/json', '42');
    expect(number.status).toBe(200);
    expect(((await number.json()) as { data: RunDetail }).data).toMatchObject({
      input_values: { count: 42 },
      output: { result: 'n=42' },
    });
    const word = await send(one.url, 'application/json', '"many"');
    expect(word.status).toBe(400);
    expect(await word.json()).toMatchObject({
      errors: [{ pointer: '/body/inputs/count', message: 'must be an integer' }],
    });

    const two = await triggerOf(twoInputGraph);
    for (const body of ['"Safari"', 'null', '7']) {
      const res = await send(two.url, 'application/json', body);
      expect(res.status, body).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_run_inputs' });
    }
    expect(await runsOf(two.workflowId)).toBe(0);
  });

  it('bounds every kind of body at BODY_LIMIT_BYTES (413), bad JSON is 400, other types 415', async () => {
    const { url, workflowId } = await triggerOf(objectGraph);
    const big = 'x'.repeat(BODY_LIMIT);
    expect((await send(url, 'application/json', JSON.stringify({ big }))).status).toBe(413);
    expect((await send(url, 'application/x-www-form-urlencoded', `big=${big}`)).status).toBe(413);
    expect((await send(url, 'text/plain', big + 'x')).status).toBe(413);
    const badJson = await send(url, 'application/json', '{"event": ');
    expect(badJson.status).toBe(400);
    expect(badJson.headers.get('content-type')).toContain('application/problem+json');
    expect((await send(url, 'application/xml', '<event/>')).status).toBe(415);
    expect(await runsOf(workflowId)).toBe(0);
  });

  it("reads inputs through the trigger's templates over body, headers and query, typed per input", async () => {
    const inputs = {
      ticket: '{{ body.issue.title }} ({{ headers["x-github-event"] }} from {{ query.source }})',
      priority: '{{ body.issue.number }}',
    };
    const { url, workflowId } = await triggerOf(twoInputGraph, inputs);
    const listed = await alice.GET('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(listed.data!.data[0]!.inputs).toEqual(inputs);
    const body = { action: 'opened', issue: { number: 7, title: 'Safari', labels: [{ name: 'bug' }] } };
    const res = await fetch(`${url}?source=gh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-GitHub-Event': 'issues', Prefer: 'wait=10' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: RunDetail }).data).toMatchObject({
      input_values: { ticket: 'Safari (issues from gh)', priority: 7 },
      output: { result: 'Safari (issues from gh) at 7' },
    });
  });

  it('gives an object input the JSON a template prints: a form field of JSON text, as GitHub sends its form', async () => {
    const { url } = await triggerOf(objectGraph, { event: '{{ body.payload }}' });
    const form = new URLSearchParams({ payload: JSON.stringify(githubPush) }).toString();
    const res = await send(url, 'application/x-www-form-urlencoded', form);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: RunDetail }).data).toMatchObject({
      input_values: { event: githubPush },
      output: { result: 'octocat/Hello-World by octocat' },
    });
  });

  it('refuses a template that fails or gives the wrong type with a 400 naming the input, and starts nothing', async () => {
    const failing = await triggerOf(objectGraph, { event: '{{ body.text | parse_json }}' });
    const notJson = await send(failing.url, 'application/json', JSON.stringify({ text: 'not json' }));
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({
      code: 'invalid_run_inputs',
      errors: [{ pointer: '/body/inputs/event', message: expect.stringContaining('parse_json') }],
    });
    const typed = await triggerOf(twoInputGraph, { ticket: '{{ body.t }}', priority: '{{ body.p }}' });
    const wrong = await send(typed.url, 'application/json', JSON.stringify({ t: 'x', p: 'high' }));
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({
      errors: [{ pointer: '/body/inputs/priority', message: 'must be an integer' }],
    });
    // A template no render can finish within the bounds (time or memory, whichever comes first).
    const endless = await triggerOf(objectGraph, { event: '{% for i in (1..100000000) %}{{ body }}{% endfor %}' });
    const bounded = await send(endless.url, 'application/json', JSON.stringify({ a: 1 }));
    expect(bounded.status).toBe(400);
    expect(await bounded.json()).toMatchObject({
      code: 'invalid_run_inputs',
      errors: [{ pointer: '/body/inputs/event' }],
    });
    expect(await runsOf(failing.workflowId)).toBe(0);
    expect(await runsOf(typed.workflowId)).toBe(0);
    expect(await runsOf(endless.workflowId)).toBe(0);
  });

  it('checks the templates when the trigger is made: a name that is no input, a template that does not parse (400)', async () => {
    const made = await alice.POST('/api/workflows', { body: { name: 'hooked', ...twoInputGraph } });
    const path = { workflow_id: made.data!.data.id };
    const unknown = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path },
      body: { inputs: { ticket: '{{ body.t }}', topic: '{{ body.x }}' } },
    });
    expect(unknown.response.status).toBe(400);
    expect(unknown.error).toMatchObject({ code: 'invalid_field', errors: [{ pointer: '/body/inputs/topic' }] });
    const broken = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path },
      body: { inputs: { ticket: '{{ body.t ' } },
    });
    expect(broken.response.status).toBe(400);
    expect(broken.error).toMatchObject({ code: 'invalid_field', errors: [{ pointer: '/body/inputs/ticket' }] });
    const listed = await alice.GET('/api/workflows/{workflow_id}/triggers', { params: { path } });
    expect(listed.data!.meta.total).toBe(0);
  });
});
