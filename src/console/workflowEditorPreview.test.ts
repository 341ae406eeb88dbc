import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { listWorkflows } from '../workflows/service.ts';
import { createUser } from '../accounts/users.ts';

// The editor's live preview (POST /workflows/editor/preview, what /assets/editor.js asks while the
// user types): the picture and every problem of the form as it stands, by the rules a save
// applies, with nothing saved; CSRF-checked like every console POST, signed-in users only.

describe('the workflow editor preview', () => {
  let server: TestServer;
  let browser: Browser;
  let userId: number;
  let csrf: string;

  beforeAll(async () => {
    server = await startTestServer();
    userId = (await createUser(server.ctx, { login: 'previewer', password: 'test-password-1' })).id;
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'previewer', 'test-password-1', '/workflows')).status).toBe(303);
    csrf = formFields(await (await browser.fetch('/workflows/new')).text()).csrf_token!;
  });
  afterAll(() => server.close());

  const graph = {
    nodes: [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      { id: 'ask', type: 'llm_call', config: { model: 'gpt-9', prompt: '{{ inputs.text }}' } },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: [
      { from: 'in', to: 'ask' },
      { from: 'ask', to: 'out' },
    ],
  };

  it('answers the picture and each problem placed at its node and field, and saves nothing', async () => {
    const res = await browser.post('/workflows/editor/preview', {
      csrf_token: csrf,
      name: 'Draft',
      description: '',
      graph: JSON.stringify(graph),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as {
      graph: string;
      problems: { pointer: string; label: string; nodeId?: string; message: string }[];
    };
    expect(body.problems).toEqual([
      {
        pointer: '/nodes/1/config/model',
        message: expect.stringContaining('gpt-9'),
        label: 'node "ask", config.model',
        nodeId: 'ask',
      },
    ]);
    expect(body.graph).toContain('data-node="ask"');
    expect(body.graph).toContain('href="#edit-node-ask"');
    expect(body.graph).toMatch(/class="node type-llm_call status-failed"/);
    expect((await listWorkflows(server.ctx, userId, { page: 1, perPage: 20 })).data).toEqual([]);
  });

  it('says what is wrong with text that is not a graph, and draws nothing', async () => {
    const body = (await (
      await browser.post('/workflows/editor/preview', { csrf_token: csrf, name: '', graph: '{"nodes": [' })
    ).json()) as { graph: unknown; problems: { pointer: string }[] };
    expect(body.graph).toBeNull();
    expect(body.problems.map((p) => p.pointer)).toEqual(['/name', '/graph']);
  });

  it('refuses a request without the CSRF token (403), and a visitor who is not signed in', async () => {
    expect((await browser.post('/workflows/editor/preview', { name: 'x', graph: '{}' })).status).toBe(403);
    const stranger = await new Browser(server.baseUrl).post('/workflows/editor/preview', { name: 'x', graph: '{}' });
    expect(stranger.status).toBe(303);
    expect(stranger.headers.get('location')).toMatch(/^\/login/);
  });
});
