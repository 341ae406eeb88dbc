// The approval node through runs, on a real HTTP server, store (PostgreSQL; MariaDB too with
// TEST_MYSQL_URL), queue and worker, with a local provider speaking OpenAI's wire format: the
// example workflow (examples/workflows/approval.json) waits for a person (the run `waiting`, its
// job over, its node.waiting event carrying the links), then goes on from its answer through the
// API or the single-use link, without calling the provider again; a timeout routes down the
// node's error edge; cancel, a foreign user, bad and concurrent answers are refused as documented.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { Browser, logIn } from '../../test/support/oauthFlow.ts';
import { findRun } from './store.ts';
import { findWaitingApproval, settleApproval } from './approvalsStore.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { approvalExample, waitingEvent } from '../../test/support/approvals.ts';

type WorkflowCreate = Schemas['WorkflowCreate'];
type Run = Schemas['Run'] & { logs?: Schemas['RunStep'][] };

describe.each(testDialects())('approval runs on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let aliceToken: string;
  let bob: ApiClient;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'gpt-4o-mini' },
    });
    const key = async (login: string) => {
      const user = await createUser(server.ctx, { login, password: 'correct horse battery' });
      const { token } = await createAccessToken(server.ctx, {
        userId: user.id,
        namespace: login,
        name: 'runs',
        usageScenario: 'paid',
        permissions: ['workflows'],
      });
      return token;
    };
    aliceToken = await key('alice');
    alice = createApiClient(server.baseUrl, { bearer: aliceToken });
    bob = createApiClient(server.baseUrl, { bearer: await key('bob') });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  /** Starts the example; answers once it is waiting (Prefer: wait answers a waiting run at once). */
  async function startWaiting(timeoutSeconds?: number): Promise<{ workflowId: string; run: Run }> {
    const created = await alice.POST('/api/workflows', { body: approvalExample(timeoutSeconds) });
    if (!created.data) throw new Error(`create failed: ${JSON.stringify(created.error)}`);
    const workflowId = created.data.data.id;
    fake.replies = [{ kind: 'completion', content: 'Sorry! Refunded.' }];
    const started = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId } },
      body: { inputs: { ticket: 'Charged twice' } },
    });
    if (!started.data) throw new Error(`run failed: ${JSON.stringify(started.error)}`);
    const run = await until(workflowId, started.data.data.id, (r) => r.status !== 'queued' && r.status !== 'running');
    return { workflowId, run };
  }

  /** Reads the run until `done` says so (each read waits for its end or its pause, up to 5 s; 30 s in all). */
  async function until(workflowId: string, runId: string, done: (run: Run) => boolean): Promise<Run> {
    const deadline = Date.now() + 30_000; // a waiting run answers at once: read again until then
    while (Date.now() < deadline) {
      const { data } = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
        params: { path: { workflow_id: workflowId, run_id: runId }, header: { Prefer: 'wait=5' } },
      });
      if (data && done(data.data as Run)) return data.data as Run;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`run ${runId} never got there`);
  }

  const resume = (client: ApiClient, workflowId: string, runId: string, body: Record<string, unknown>) =>
    client.POST('/api/workflows/{workflow_id}/runs/{run_id}/resume', {
      params: { path: { workflow_id: workflowId, run_id: runId } },
      body: body as Schemas['RunResume'],
    });

  it('waits with its step waiting and its event carrying the links, then goes on from the API answer', async () => {
    const { workflowId, run } = await startWaiting();
    expect(run.status).toBe('waiting');
    expect(run.finished_at).toBeNull();
    const steps = Object.fromEntries(run.logs!.map((s) => [s.node_id, s]));
    expect(steps.draft!.status).toBe('completed');
    expect(steps.review!.status).toBe('waiting');
    expect(steps.review!.input).toContain('Sorry! Refunded.');
    expect(steps.result).toBeUndefined(); // not yet reached: the run has not ended
    const event = await waitingEvent(server.baseUrl, aliceToken, workflowId, run.id);
    expect(event).toMatchObject({
      node_id: 'review',
      resume_url: `${server.baseUrl}/api/workflows/${workflowId}/runs/${run.id}/resume`,
    });
    expect(event.message).toContain(run.id); // templates read run.id
    expect(event.approval_url).toMatch(new RegExp(`^${server.baseUrl}/approvals/apv_`));
    const calls = fake.requests.length;

    const answered = await resume(alice, workflowId, run.id, { answer: { approved: true } });
    expect(answered.response.status).toBe(200);
    expect(answered.data!.data.status).toBe('queued');
    const done = await until(workflowId, run.id, (r) => r.status === 'completed');
    expect(done.output).toEqual({ result: 'Sent: Sorry! Refunded.' });
    expect(fake.requests.length).toBe(calls); // the draft is not made again
    const after = Object.fromEntries(done.logs!.map((s) => [s.node_id, s]));
    expect(after.review).toMatchObject({ status: 'completed', output_value: { approved: true } });
    expect(after.hold!.status).toBe('skipped');
    expect(done.logs!.filter((s) => s.node_id === 'review')).toHaveLength(1);

    const again = await resume(alice, workflowId, run.id, { answer: { approved: false } });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'run_not_waiting' });
  });

  it('refuses an answer that does not fit, naming the field, and another user’s run as not found', async () => {
    const { workflowId, run } = await startWaiting();
    const bad = await resume(alice, workflowId, run.id, { answer: { approved: 'yes', extra: 1 } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 'invalid_approval_answer' });
    expect(bad.error!.errors!.map((e) => e.pointer).sort()).toEqual(['/body/answer/approved', '/body/answer/extra']);
    const missing = await resume(alice, workflowId, run.id, { answer: {} });
    expect(missing.error!.errors).toEqual([{ pointer: '/body/answer/approved', message: 'is required' }]);
    const foreign = await resume(bob, workflowId, run.id, { answer: { approved: true } });
    expect(foreign.response.status).toBe(404);
    const wrongNode = await resume(alice, workflowId, run.id, { node_id: 'draft', answer: { approved: true } });
    expect(wrongNode.response.status).toBe(409);
    // Still waiting after all of these: a refused answer changes nothing.
    expect((await until(workflowId, run.id, () => true)).status).toBe('waiting');

    const refused = await resume(alice, workflowId, run.id, {
      node_id: 'review',
      answer: { approved: false, note: 'Too curt' },
    });
    expect(refused.response.status).toBe(200);
    const done = await until(workflowId, run.id, (r) => r.status === 'completed');
    expect(done.output).toEqual({ result: 'Held back: Too curt' });
  });

  it('takes exactly one of two answers sent at once', async () => {
    const { workflowId, run } = await startWaiting();
    const answers = await Promise.all([
      resume(alice, workflowId, run.id, { answer: { approved: true } }),
      resume(alice, workflowId, run.id, { answer: { approved: false, note: 'no' } }),
    ]);
    expect(answers.map((a) => a.response.status).sort()).toEqual([200, 409]);
    const done = await until(workflowId, run.id, (r) => r.status === 'completed');
    const winner = answers.find((a) => a.response.status === 200)!;
    expect(done.output).toEqual({ result: winner === answers[0] ? 'Sent: Sorry! Refunded.' : 'Held back: no' });
  });

  it('cancels a waiting run, after which an answer is refused', async () => {
    const { workflowId, run } = await startWaiting();
    const cancelled = await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
      params: { path: { workflow_id: workflowId, run_id: run.id } },
    });
    expect(cancelled.data!.data.status).toBe('cancelled');
    const read = await until(workflowId, run.id, () => true);
    expect(read.logs!.find((s) => s.node_id === 'review')!.status).toBe('cancelled');
    const late = await resume(alice, workflowId, run.id, { answer: { approved: true } });
    expect(late.response.status).toBe(409);
    expect(late.error!.detail).toContain('cancelled');
  });

  it('cancels a waiting run when its workflow is deleted, as it does running ones', async () => {
    const { workflowId, run } = await startWaiting();
    const deleted = await alice.DELETE('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(deleted.response.status).toBe(204);
    expect((await findRun(server.ctx.db, run.id))?.status).toBe('cancelled');
  });

  it('refuses at save an approval inside a map body, and an answer_schema requiring a field it lacks', async () => {
    const inMap = await alice.POST('/api/workflows', {
      body: {
        name: 'approve each',
        nodes: [
          { id: 'in', type: 'text_input', config: { variable: 'tickets' } },
          {
            id: 'each',
            type: 'map',
            config: {
              item_variable: 'ticket',
              body: {
                nodes: [
                  { id: 'item', type: 'text_input', config: { variable: 'ticket' } },
                  { id: 'ask', type: 'approval', config: { message: 'OK? {{ inputs.ticket }}' } },
                  { id: 'out', type: 'text_output', config: { format: 'json' } },
                ],
                edges: [
                  { from: 'item', to: 'ask' },
                  { from: 'ask', to: 'out' },
                ],
              },
            },
          },
          { id: 'result', type: 'text_output', config: { format: 'json' } },
        ],
        edges: [
          { from: 'in', to: 'each' },
          { from: 'each', to: 'result' },
        ],
      } as WorkflowCreate,
    });
    expect(inMap.response.status).toBe(422);
    expect(JSON.stringify(inMap.error)).toContain('not inside a map body');
    const example = approvalExample();
    const review = example.nodes!.find((n) => n.id === 'review')!;
    (review.config as { answer_schema: { required: string[] } }).answer_schema.required = ['approved', 'reason'];
    const missing = await alice.POST('/api/workflows', { body: example });
    expect(missing.response.status).toBe(422);
    expect(JSON.stringify(missing.error)).toContain('names \\"reason\\", which is not a property');
    // Not the list its schema says (a fuzzer's find): a 422 naming it, never a 500.
    (review.config as { answer_schema: { required: unknown } }).answer_schema.required = {};
    const notList = await alice.POST('/api/workflows', { body: example });
    expect(notList.response.status).toBe(422);
    expect(notList.error).toMatchObject({
      errors: [expect.objectContaining({ pointer: expect.stringContaining('/answer_schema/required') })],
    });
  });

  it('fails an approval reached inside a called workflow with approval_unavailable: only a run waits', async () => {
    const callee = await alice.POST('/api/workflows', { body: approvalExample() });
    const caller = await alice.POST('/api/workflows', {
      body: {
        name: 'calls the approval',
        nodes: [
          { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
          { id: 'call', type: 'workflow', config: { workflow_id: callee.data!.data.id } },
          { id: 'out', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'in', to: 'call' },
          { from: 'call', to: 'out' },
        ],
      },
    });
    expect(caller.response.status).toBe(201);
    fake.replies = [{ kind: 'completion', content: 'Sorry! Refunded.' }];
    const { data } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: caller.data!.data.id }, header: { Prefer: 'wait=20' } },
      body: { inputs: { ticket: 'Charged twice' } },
    });
    // The callee's approval goes on past its failure (on_error: continue): its error edge answers.
    expect(data!.data).toMatchObject({
      status: 'completed',
      output: { out: 'No answer in time (approval_unavailable).' },
    });
    expect(data!.data.logs.find((s) => s.node_id === 'call.review')).toMatchObject({
      status: 'failed',
      error: { code: 'approval_unavailable' },
    });
  });

  it('lists waiting runs by status', async () => {
    const { workflowId, run } = await startWaiting();
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId }, query: { search: 'waiting' } },
    });
    expect(data!.data.map((r) => r.id)).toEqual([run.id]);
  });

  /** Opens the link as a browser would: its page, the session cookie and the form's CSRF token. */
  async function openLink(url: string) {
    const res = await fetch(url);
    const page = await res.text();
    const cookie = (res.headers.getSetCookie()[0] ?? '').split(';')[0]!;
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? '';
    return { status: res.status, page, cookie, csrf };
  }
  const postLink = (url: string, cookie: string, form: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });

  it('goes on from an answer through the single-use link, which then refuses a replay', async () => {
    const { workflowId, run } = await startWaiting();
    const { approval_url: url } = await waitingEvent(server.baseUrl, aliceToken, workflowId, run.id);
    const opened = await openLink(url);
    expect(opened.status).toBe(200);
    expect(opened.page).toContain('Sorry! Refunded.');
    expect(opened.page).toContain('name="approved"');
    expect(opened.page).toContain('name="note"');
    // No CSRF token: refused as every console form is, nothing answered.
    expect((await postLink(url, opened.cookie, { approved: 'true' })).status).toBe(403);
    const bad = await postLink(url, opened.cookie, { csrf_token: opened.csrf, approved: 'maybe' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('must be boolean');
    const sent = await postLink(url, opened.cookie, {
      csrf_token: opened.csrf,
      approved: 'false',
      note: 'Add an apology',
    });
    expect(sent.status).toBe(200);
    const done = await until(workflowId, run.id, (r) => r.status === 'completed');
    expect(done.output).toEqual({ result: 'Held back: Add an apology' });

    expect((await openLink(url)).status).toBe(409);
    const replay = await postLink(url, opened.cookie, { csrf_token: opened.csrf, approved: 'true' });
    expect(replay.status).toBe(409);
    expect((await openLink(`${server.baseUrl}/approvals/apv_unknown`)).status).toBe(404);
  });

  it('shows a waiting run on its console page with the answer form, which resumes it', async () => {
    const { workflowId, run } = await startWaiting();
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'alice', 'correct horse battery', '/workflows')).status).toBe(303);
    const runPath = `/workflows/${workflowId}/runs/${run.id}`;
    const page = await (await browser.fetch(runPath)).text();
    expect(page).toContain('data-approval-form');
    expect(page).toContain('Waiting for an answer: review');
    expect(page).toContain('Sorry! Refunded.');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)![1]!;
    const bad = await browser.post(`${runPath}/resume`, { csrf_token: csrf, node_id: 'review', approved: 'maybe' });
    expect(bad.status).toBe(400);
    const sent = await browser.post(`${runPath}/resume`, { csrf_token: csrf, node_id: 'review', approved: 'true' });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`${runPath}?done=run-resumed`);
    const done = await until(workflowId, run.id, (r) => r.status === 'completed');
    expect(done.output).toEqual({ result: 'Sent: Sorry! Refunded.' });
    const again = await browser.post(`${runPath}/resume`, { csrf_token: csrf, node_id: 'review', approved: 'true' });
    expect(again.status).toBe(409);
  });

  it('takes no answer past the deadline, even before the sweep has timed the approval out', async () => {
    const { workflowId, run } = await startWaiting();
    const approval = (await findWaitingApproval(server.ctx.db, run.id))!;
    const deadline = Number(approval.expires_at);
    const answer = { state: 'answered' as const, answer: '{"approved":true}' };
    expect(await settleApproval(server.ctx.db, approval, answer, deadline)).toBe(false);
    expect((await findRun(server.ctx.db, run.id))!.status).toBe('waiting');
    expect(await settleApproval(server.ctx.db, approval, answer, deadline - 1)).toBe(true);
    expect((await until(workflowId, run.id, (r) => r.status === 'completed')).output).toEqual({
      result: 'Sent: Sorry! Refunded.',
    });
  });

  it('times out: the node fails with approval_timeout down its error edge, and the run completes', async () => {
    const { workflowId, run } = await startWaiting(1);
    expect(run.status).toBe('waiting');
    // The worker's sweep (every few seconds) times it out and queues it again.
    const done = await until(workflowId, run.id, (r) => r.status === 'completed');
    expect(done.output).toEqual({ result: 'No answer in time (approval_timeout).' });
    const review = done.logs!.find((s) => s.node_id === 'review')!;
    expect(review).toMatchObject({ status: 'failed', error: { code: 'approval_timeout' } });
    const late = await resume(alice, workflowId, run.id, { answer: { approved: true } });
    expect(late.response.status).toBe(409);
    const { approval_url: url } = await waitingEvent(server.baseUrl, aliceToken, workflowId, run.id);
    expect((await openLink(url)).status).toBe(410); // its link expired with it
  }, 60_000);
});

describe.each(testDialects())('a waiting run across a restart on %s', (dialect) => {
  let fake: FakeOpenAI;
  let store: TestDb;
  let queueDb: TestDb;
  let server: TestServer | undefined;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    store = await createTestDb(dialect, { migrate: false });
    queueDb = await createTestDb('pg', { migrate: false });
  });
  afterAll(async () => {
    await server?.close();
    await store?.destroy();
    await queueDb?.destroy();
    await fake?.close();
  });

  const start = () =>
    startTestServer({
      databaseUrl: store.url,
      queueUrl: queueDb.url,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'gpt-4o-mini' },
    });

  it('is still waiting after the server and its worker stop and start again, and goes on from its answer', async () => {
    server = await start();
    const user = await createUser(server.ctx, { login: 'carol', password: 'correct horse battery' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'carol',
      name: 'runs',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    let client = createApiClient(server.baseUrl, { bearer: token });
    const created = await client.POST('/api/workflows', { body: approvalExample() });
    const workflowId = created.data!.data.id;
    fake.replies = [{ kind: 'completion', content: 'Sorry! Refunded.' }];
    const started = await client.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=20' } },
      body: { inputs: { ticket: 'Charged twice' } },
    });
    const runId = started.data!.data.id;
    expect(started.data!.data.status).toBe('waiting');
    await server.close();
    server = undefined;

    server = await start();
    client = createApiClient(server.baseUrl, { bearer: token });
    const path = { workflow_id: workflowId, run_id: runId };
    const read = await client.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } });
    expect(read.data!.data.status).toBe('waiting');
    const calls = fake.requests.length;
    const answered = await client.POST('/api/workflows/{workflow_id}/runs/{run_id}/resume', {
      params: { path },
      body: { answer: { approved: true } },
    });
    expect(answered.response.status).toBe(200);
    let done: Run | undefined;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      const { data } = await client.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
        params: { path, header: { Prefer: 'wait=5' } },
      });
      done = data!.data as Run;
      if (done.status === 'completed') break;
    }
    expect(done).toMatchObject({ status: 'completed', output: { result: 'Sent: Sorry! Refunded.' } });
    expect(fake.requests.length).toBe(calls);
  }, 90_000);
});
