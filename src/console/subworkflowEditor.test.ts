// The console's editor saves through the workflows service, so a sub-workflow call whose mapping
// does not fit the callee's inputs is refused there too: the editor shown again (422) with the
// problem at its node and field, on a new workflow as on an edit, and nothing saved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createWorkflow, getWorkflow, listWorkflows } from '../workflows/service.ts';
import { createUser } from '../accounts/users.ts';

describe('the workflow editor and sub-workflow inputs', () => {
  let server: TestServer;
  let browser: Browser;
  let userId: number;
  let calleeId: string;

  beforeAll(async () => {
    server = await startTestServer();
    userId = (await createUser(server.ctx, { login: 'composer', password: 'test-password-1' })).id;
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'composer', 'test-password-1', '/workflows')).status).toBe(303);
    calleeId = (
      await createWorkflow(server.ctx, userId, {
        name: 'callee',
        nodes: [
          { id: 'in', type: 'text_input', config: { variable: 'body' } },
          { id: 'out', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [{ from: 'in', to: 'out' }],
      })
    ).id;
  });
  afterAll(() => server.close());

  const caller = (inputs: Record<string, string>) =>
    JSON.stringify({
      nodes: [
        { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
        { id: 'call', type: 'workflow', config: { workflow_id: calleeId, inputs } },
        { id: 'result', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'doc', to: 'call' },
        { from: 'call', to: 'result' },
      ],
    });

  const csrfOf = async (path: string) => formFields(await (await browser.fetch(path)).text()).csrf_token!;

  it('a new workflow mapping a name the callee lacks is shown again with the problem, and not saved', async () => {
    const res = await browser.post('/workflows/new', {
      csrf_token: await csrfOf('/workflows/new'),
      name: 'Caller',
      description: '',
      graph: caller({ ticket: '{{ inputs.doc }}' }),
    });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain('maps &quot;ticket&quot;, which is no input of workflow');
    expect(page).toContain('leaves the input &quot;body&quot;');
    const names = (await listWorkflows(server.ctx, userId, { page: 1, perPage: 20 })).data.map((w) => w.name);
    expect(names).toEqual(['callee']);
  });

  it('an edit leaving an input of the callee unmapped is shown again with the problem; the workflow is unchanged', async () => {
    const saved = await browser.post('/workflows/new', {
      csrf_token: await csrfOf('/workflows/new'),
      name: 'Fitting caller',
      description: '',
      graph: caller({ body: '{{ inputs.doc }}' }),
    });
    expect(saved.status).toBe(303);
    const id = saved.headers.get('location')!.split('/').at(-1)!;
    const edit = `/workflows/${id}/edit`;
    const res = await browser.post(edit, {
      csrf_token: await csrfOf(edit),
      name: 'Fitting caller',
      description: '',
      version: '1',
      graph: caller({ ticket: '{{ inputs.doc }}' }),
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('maps &quot;ticket&quot;, which is no input of workflow');
    expect((await getWorkflow(server.ctx, userId, id)).version).toBe(1);
  });
});
