// examples/workflows/github-webhook.json, saved through the API with a trigger that verifies
// GitHub's signature and maps the push into typed inputs, then started by a GitHub-style push
// delivery (X-GitHub-Event, X-GitHub-Delivery, X-Hub-Signature-256 over the raw body) and run by a
// worker against a local provider speaking the OpenAI wire format.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { workflowsClient } from '../support/workflowUsers.ts';

const SECRET = 'github-webhook-secret';
const example = JSON.parse(
  readFileSync(new URL('../../examples/workflows/github-webhook.json', import.meta.url), 'utf8'),
) as Schemas['WorkflowCreate'];

/** What GitHub sends on a push, trimmed to the fields a reader needs (GitHub sends many more). */
const push = {
  ref: 'refs/heads/main',
  before: '6113728f27ae82c7b1a177c8d03f9e96e0adf246',
  after: '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c',
  repository: { id: 1296269, full_name: 'octocat/Hello-World', private: false },
  pusher: { name: 'octocat', email: 'octocat@github.com' },
  commits: [
    { id: '0d1a26e6', message: 'Fix export on Safari', author: { name: 'Mona', email: 'mona@example.com' } },
    { id: '1e2b37f7', message: 'Add CSV download', author: { name: 'Hubot', email: 'hubot@example.com' } },
  ],
  head_commit: { id: '1e2b37f7', message: 'Add CSV download' },
};

describe('example: GitHub webhook', () => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'gpt-4o-mini' },
    });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('a signed push runs it: the commits reach the model, the notes are the output; a redelivery starts nothing', async () => {
    fake.answer = (request) => ({
      kind: 'completion',
      content: `NOTES\n${String(request.messages.at(-1)?.content ?? '')}`,
    });
    const created = await alice.POST('/api/workflows', { body: example });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const workflowId = created.data!.data.id;
    const trigger = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
      body: {
        name: 'GitHub push',
        signature: { scheme: 'github', secret: SECRET },
        inputs: {
          repo: '{{ body.repository.full_name }}',
          branch: "{{ body.ref | remove_first: 'refs/heads/' }}",
          commits: '{{ body.commits | json }}',
        },
      },
    });
    expect(trigger.response.status, JSON.stringify(trigger.error)).toBe(201);
    const url = trigger.data!.data.url;

    const body = JSON.stringify(push);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'GitHub-Hookshot/044aadd',
      'X-GitHub-Event': 'push',
      'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      Prefer: 'wait=30',
    };
    const res = await fetch(url, { method: 'POST', headers, body });
    expect(res.status, await res.clone().text()).toBe(200);
    const run = ((await res.json()) as { data: Schemas['RunDetail'] }).data;
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.input_values).toEqual({ repo: 'octocat/Hello-World', branch: 'main', commits: push.commits });
    const prompt = 'octocat/Hello-World (main):\n- Fix export on Safari (Mona)\n- Add CSV download (Hubot)\n';
    expect(fake.requests.at(-1)!.messages.at(-1)!.content).toBe(prompt);
    expect(run.output).toEqual({ result: `NOTES\n${prompt}` });

    // GitHub's "Redeliver" sends the same delivery id: the same run answers, no second model call.
    const calls = fake.requests.length;
    const again = await fetch(url, { method: 'POST', headers, body });
    expect(((await again.json()) as { data: Schemas['RunDetail'] }).data.id).toBe(run.id);
    expect(fake.requests.length).toBe(calls);
    // A forged push (signed with another secret) is refused and starts nothing.
    const forged = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'X-GitHub-Delivery': 'forged', 'X-Hub-Signature-256': 'sha256=' + '0'.repeat(64) },
      body,
    });
    expect(forged.status).toBe(401);
    const runs = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(runs.data!.meta.total).toBe(1);
  });
});
