// A second MCP client against the live service: the Python MCP SDK (`mcp` from PyPI, pinned by
// scripts/mcp-python.sh) in test/support/mcp_python_client.py, with an access token of the
// authorization-code flow. It lists the tools and calls one with a progress callback; its JSON line
// is asserted here. A venv without `mcp` fails the test, saying how to install it.
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import {
  authorizeInBrowser,
  Browser,
  createFixture,
  discover,
  logIn,
  obtainTokens,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { findClientByClientId } from '../oauth/clients.ts';
import { createWorkflowTool, workflowsClientOf } from '../../test/support/workflowUsers.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
/** The venv's python: the project's .venv, or MCP_PYTHON (a checkout whose .venv is shared keeps its own). */
const python = process.env.MCP_PYTHON ?? `${root}.venv/bin/python`;
const script = `${root}test/support/mcp_python_client.py`;

interface PythonAnswer {
  protocol_version: string;
  server: string;
  tools: { name: string; title: string }[];
  is_error: boolean;
  structured: unknown;
  text: string[];
  meta: { run_id?: string } | null;
  progress: { progress: number; message: string | null }[];
  token_scope: string | null;
  /** The client id the SDK registered (OAuth sign-in only). */
  client_id: string | null;
}

/** Fails, never skips, when the Python SDK is missing: CI installs it (.ci/run), so must a developer. */
async function checkPythonSdk(): Promise<string> {
  try {
    const { stdout } = await run(python, ['-c', 'import importlib.metadata as m; print(m.version("mcp"))']);
    return stdout.trim();
  } catch (err) {
    throw new Error(
      `The Python MCP SDK is not installed in ${python}: run \`sh scripts/mcp-python.sh\` ` +
        `(or \`sh scripts/mcp-python.sh DIR\` and MCP_PYTHON=DIR/bin/python). ${String(err)}`,
    );
  }
}

/** The Python client's loopback redirect URI (RFC 8252 7.3); the test hands the callback over itself. */
const PYTHON_REDIRECT_URI = 'http://127.0.0.1:47601/callback';

describe.each(testDialects())('the Python MCP SDK client against /mcp (%s)', (dialect) => {
  let server: TestServer;
  let user: Fixture;
  let token: string;
  const ids = { echo: '', hidden: '', bobs: '' };

  const apiOf = (f: { userId: number; login: string }) => workflowsClientOf(server.ctx, server.baseUrl, f);

  const create = createWorkflowTool;

  async function callFromPython(tool: string, args: Record<string, unknown>): Promise<PythonAnswer> {
    const { stdout } = await run(python, [script, `${server.baseUrl}/mcp`, tool, JSON.stringify(args)], {
      env: { ...process.env, MCP_ACCESS_TOKEN: token },
    });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as PythonAnswer;
  }

  /**
   * The script with the SDK's own OAuth provider: it prints the authorization URL it would open;
   * the user (a logged-in cookie jar answering the consent page) allows, and the callback URL goes
   * back on its stdin, as a local callback server would hand it over.
   */
  async function callFromPythonWithOAuth(tool: string, args: Record<string, unknown>) {
    const child = spawn(python, [script, `${server.baseUrl}/mcp`, tool, JSON.stringify(args)], {
      env: {
        ...process.env,
        MCP_REDIRECT_URI: PYTHON_REDIRECT_URI,
      },
    });
    let out = '';
    let err = '';
    let handled = 0;
    const authorizations: URL[] = [];
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const answered: Promise<void>[] = [];
    child.stderr.on('data', (d: Buffer) => (err += String(d)));
    child.stdout.on('data', (d: Buffer) => {
      out += String(d);
      const lines = out.split('\n').slice(0, -1); // whole lines only
      for (const line of lines.slice(handled)) {
        handled += 1;
        if (!line.startsWith('{"authorize"')) continue;
        const url = new URL((JSON.parse(line) as { authorize: string }).authorize);
        authorizations.push(url);
        answered.push(
          (async () => {
            const browser = new Browser(server.baseUrl);
            await logIn(browser, user.login, user.password);
            const callback = await authorizeInBrowser(browser, url);
            child.stdin.write(`${callback.href}\n`);
          })(),
        );
      }
    });
    const code = await exited;
    await Promise.all(answered);
    if (code !== 0) throw new Error(`the Python client exited with ${code}:\n${err}`);
    const last = out.trim().split('\n').at(-1)!;
    return { answer: JSON.parse(last) as PythonAnswer, authorizations };
  }

  beforeAll(async () => {
    expect(await checkPythonSdk()).toMatch(/^\d+\.\d+\.\d+$/);
    // The Python client registers itself (RFC 7591), as MCP clients do; the operator allows it.
    server = await startTestServer({ dialect, runs: true, env: { CLIENT_REGISTRATION: 'open' } });
    user = await createFixture(server.ctx.db);
    const api = await apiOf(user);
    const echo = { name: 'Echo', description: 'Answers with the ticket.', ...seedGraph('echo') };
    ids.echo = await create(api, echo, true);
    ids.hidden = await create(api, { ...echo, name: 'Not a tool' }, false);
    ids.bobs = await create(await apiOf(await createFixture(server.ctx.db)), { ...echo, name: "Bob's" }, true);
    // Issued for this MCP server (RFC 8707 `resource`), as /mcp requires.
    const resource = { resource: `${server.baseUrl}/mcp` };
    token = (await obtainTokens(server.baseUrl, await discover(server.baseUrl), user, 'workflows:run', resource)).tokens
      .access_token;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("lists the user's exposed tools and calls one: structured output and progress notifications", async () => {
    const answer = await callFromPython(ids.echo, { ticket: 'from python' });
    expect(answer.server).toBe('openauth-workflows');
    expect(answer.protocol_version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(answer.tools).toEqual([{ name: ids.echo, title: 'Echo' }]);
    expect(answer.is_error).toBe(false);
    expect(answer.structured).toEqual({ result: 'from python' });
    expect(answer.text).toEqual([JSON.stringify({ result: 'from python' })]);
    expect(answer.progress.length).toBeGreaterThan(0);
    expect(answer.progress.map((p) => p.message)).toContain('node.finished summarise (completed)');
    const steps = answer.progress.map((p) => p.progress);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    const api = await apiOf(user);
    const runs = await api.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: ids.echo } } });
    expect(runs.data!.data.map((r) => r.id)).toEqual([answer.meta?.run_id]);
  });

  it("signs in with the SDK's own OAuth provider (discovery from the 401, PKCE through our consent) and calls a tool", async () => {
    const { answer, authorizations } = await callFromPythonWithOAuth(ids.echo, { ticket: 'signed in' });
    expect(authorizations).toHaveLength(1);
    // A client it registered itself, a public one: no secret, PKCE.
    expect(answer.client_id).toMatch(/\S/);
    expect(answer.client_id).not.toBe(user.clientId);
    expect(await findClientByClientId(server.ctx, answer.client_id!)).toMatchObject({
      registrationKind: 'dynamic',
      tokenEndpointAuthMethod: 'none',
    });
    expect(Object.fromEntries(authorizations[0]!.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: answer.client_id,
      redirect_uri: PYTHON_REDIRECT_URI,
      code_challenge_method: 'S256',
    });
    expect(answer.tools).toEqual([{ name: ids.echo, title: 'Echo' }]);
    expect(answer.structured).toEqual({ result: 'signed in' });
    // The SDK found /mcp's protected-resource metadata from the 401 and asks for its scopes, for it
    // (the MCP specification's scope selection; RFC 8707 `resource`).
    expect(authorizations[0]!.searchParams.get('scope')).toBe('workflows:run');
    expect(authorizations[0]!.searchParams.get('resource')).toBe(`${server.baseUrl}/mcp`);
    expect(answer.token_scope?.split(' ')).toContain('workflows:run');
  });

  it("cannot call another user's tool or an unexposed workflow: an error, and no run", async () => {
    for (const name of [ids.bobs, ids.hidden])
      await expect(callFromPython(name, { ticket: 'x' })).rejects.toThrow(/Unknown tool/);
    const api = await apiOf(user);
    const runs = await api.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: ids.hidden } } });
    expect(runs.data!.data).toEqual([]);
  });
});
