import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';

// RunStep.attempts: each llm_call step says how many times it called its model
// provider, its retries included, whether it ended completed or failed; a node that calls no
// model has none. On both stores (MySQL writes a run's last steps with its end in one round trip).

describe.each(testDialects())('run steps count their attempts (%s)', (dialect) => {
  let server: TestServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true, env: { DEMO_MODELS: 'true' } });
    const user = await createUser(server.ctx, { login: 'counter', password: 'test-password-1' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'counter',
      name: 'runs',
      usageScenario: 'trial',
      permissions: ['workflows'],
    });
    api = createApiClient(server.baseUrl, { bearer: token });
  });
  afterAll(() => server?.close());

  async function runWith(model: string, maxAttempts: number) {
    const { data: created } = await api.POST('/api/workflows', {
      body: {
        name: `${model} x${maxAttempts}`,
        nodes: [
          { id: 'question', type: 'text_input', config: { variable: 'question' } },
          {
            id: 'answer',
            type: 'llm_call',
            config: {
              model,
              prompt: '{{ inputs.question }}',
              retry: { max_attempts: maxAttempts, backoff_seconds: 0 },
            },
          },
          { id: 'result', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'question', to: 'answer' },
          { from: 'answer', to: 'result' },
        ],
      },
    });
    const workflowId = created!.data.id;
    const { data: started } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=30' } },
      body: { inputs: { question: 'why?' } },
    });
    const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: started!.data.id } },
    });
    return data!.data;
  }

  it('counts the failed attempts before the one that answered, and none on nodes that call no model', async () => {
    const run = await runWith('echo-fail-2', 3);
    expect(run.status).toBe('completed');
    const steps = Object.fromEntries(run.logs.map((s) => [s.node_id, s]));
    expect(steps.answer!.attempts).toBe(3);
    expect(steps.question).not.toHaveProperty('attempts');
    expect(steps.result).not.toHaveProperty('attempts');
  });

  it('counts every attempt of a call that failed for good, and one for a call that answered at once', async () => {
    const failed = await runWith('echo-fail', 2);
    expect(failed.status).toBe('failed');
    expect(failed.logs.find((s) => s.node_id === 'answer')).toMatchObject({ status: 'failed', attempts: 2 });
    const plain = await runWith('echo', 3);
    expect(plain.logs.find((s) => s.node_id === 'answer')).toMatchObject({ status: 'completed', attempts: 1 });
  });
});
