import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { listWorkflows } from '../workflows/service.ts';
import { createUser } from '../accounts/users.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { testDialects } from '../../test/support/db.ts';
import type { EditorPreview } from './editorTypes.ts';

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

// What the editor's template fields read from the preview: what each node's templates may read,
// and (for an edit, `?workflow=`) each template rendered with the workflow's last run's values;
// never another user's.
describe.each(testDialects())('the editor preview of template fields (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;
  let csrf: string;
  let own: string;
  let foreign: string;

  const graph = {
    nodes: [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      { id: 'ask', type: 'llm_call', config: { model: 'echo', prompt: 'Say: {{ inputs.text | upcase }}' } },
      { id: 'note', type: 'template', config: { template: '{{ nodes.ask.output }} ({{ inputs.missing.x }})' } },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: [
      { from: 'in', to: 'ask' },
      { from: 'ask', to: 'note' },
      { from: 'note', to: 'out' },
    ],
  };

  async function ranWorkflow(login: string): Promise<string> {
    const user = await createUser(server.ctx, { login, password: 'test-password-1' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: login,
      name: 'tests',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    const api = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const saved = {
      ...graph,
      nodes: graph.nodes.map((n) => (n.id === 'note' ? { ...n, config: { template: 'x' } } : n)),
    };
    const created = (await (await api('/api/workflows', { name: login, ...saved })).json()) as { data: { id: string } };
    const run = await api(
      `/api/workflows/${created.data.id}/run`,
      { inputs: { text: 'hello' } },
      { Prefer: 'wait=20' },
    );
    expect(run.status).toBe(200);
    return created.data.id;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    own = await ranWorkflow('templater');
    foreign = await ranWorkflow('someone-else');
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'templater', 'test-password-1', '/workflows')).status).toBe(303);
    csrf = formFields(await (await browser.fetch('/workflows/new')).text()).csrf_token!;
  });
  afterAll(() => server?.close());

  const preview = async (query = '') =>
    (await (
      await browser.post(`/workflows/editor/preview${query}`, {
        csrf_token: csrf,
        name: 'x',
        graph: JSON.stringify(graph),
      })
    ).json()) as EditorPreview;

  it('answers what each node’s templates may read', async () => {
    const body = await preview();
    expect(body.scopes?.note).toEqual([
      'inputs.text',
      'nodes.ask.output',
      'nodes.in.output',
      'run.id',
      'run.created_at',
      'workflow.id',
      'workflow.version',
    ]);
    expect(body.scopes?.in).toEqual(['inputs.text', 'run.id', 'run.created_at', 'workflow.id', 'workflow.version']);
    expect(body.renderedFrom).toBeNull();
  });

  it("renders each template field with the workflow's last run, by the engine a run uses", async () => {
    const route = { id: 'route', type: 'switch', config: { value: 'nodes.ask.output | size', cases: [] } };
    const body = (await (
      await browser.post(`/workflows/editor/preview?workflow=${own}`, {
        csrf_token: csrf,
        name: 'x',
        graph: JSON.stringify({ ...graph, nodes: [...graph.nodes, route] }),
      })
    ).json()) as EditorPreview;
    expect(body.renderedFrom).toMatch(/^run run_\w+ of \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(body.rendered).toEqual({
      '/nodes/1/config/prompt': { text: 'Say: HELLO' },
      // The run's own `ask` answered its saved prompt (echo: the prompt itself).
      '/nodes/2/config/template': { text: 'Say: HELLO ()' },
      // A switch's value is an expression: its value, as the run would evaluate it.
      '/nodes/4/config/value': { text: '10' },
    });
  });

  it("renders nothing from another user's workflow, or from an id that names none", async () => {
    for (const id of [foreign, 'wf_doesnotexist', 'x'.repeat(500), '../../etc']) {
      const body = await preview(`?workflow=${encodeURIComponent(id)}`);
      expect(body.renderedFrom, id).toBeNull();
      expect(body.rendered).toEqual({});
    }
  });
});
