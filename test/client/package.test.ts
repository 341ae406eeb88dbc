// The client package as an integrator gets it: `npm pack` of client/, installed into an empty
// project, loaded by plain Node >= 20 (the machine's /usr/bin/node when it has one, as
// integrators' machines do), type-checked by tsc under strict and exactOptionalPropertyTypes, and
// used against the real service: the API, the token endpoint, the gateway, a run's end and events;
// and in Chromium, loaded as plain ES modules.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { apiKeyFor } from '../faults/support/fixtures.ts';
import { authorizeInBrowser, Browser, createFixture, logIn, PKCE, type Fixture } from '../support/oauthFlow.ts';
import { seedGraph } from '../support/seedWorkflow.ts';
import { launchChromium } from '../support/chromium.ts';
import { startFrontEnd } from './frontEnd.ts';
import { installClientPackage, plainNode, root, runInNode, typeCheck } from './installedPackage.ts';

describe(`the client package (npm pack, installed in an empty project, Node ${execFileSync(plainNode, ['-v'], { encoding: 'utf8' }).trim()})`, () => {
  let project: string;
  let server: TestServer;
  let apiKey: string;

  beforeAll(async () => {
    project = installClientPackage();
    server = await startTestServer({ runs: true });
    apiKey = (await apiKeyFor(server.ctx.db, 'client')).token;
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('installs openapi-fetch (and its helper types) and nothing else', () => {
    const installed = readdirSync(path.join(project, 'node_modules')).filter((n) => !n.startsWith('.'));
    expect(installed.sort()).toEqual(['openapi-fetch', 'openapi-typescript-helpers', 'openauth-workflows-client']);
  });

  it("ships built JavaScript and declarations only, at the contract's version", () => {
    const pkg = path.join(project, 'node_modules/openauth-workflows-client');
    const files = readdirSync(path.join(pkg, 'dist'));
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'api.d.ts']));
    const version = (JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { version: string }).version;
    expect(readFileSync(path.join(root, 'openapi.yaml'), 'utf8')).toContain(`\n  version: ${version}\n`);
  });

  it('runs in plain Node: creates a workflow, reads it back and lists it', async () => {
    const out = await runInNode(
      project,
      'main.js',
      `import { createApiClient } from 'openauth-workflows-client';
const api = createApiClient(process.argv[2], { bearer: process.argv[3] });
const created = await api.POST('/api/workflows', { body: { name: 'From the package', ...${JSON.stringify(seedGraph())} } });
const read = await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: created.data.data.id } } });
const list = await api.GET('/api/workflows', { params: { query: { search: 'From the package' } } });
console.log(JSON.stringify({ created: created.response.status, name: read.data.data.name, total: list.data.meta.total }));
`,
      [server.baseUrl, apiKey],
    );
    expect(out).toEqual({ created: 201, name: 'From the package', total: 1 });
  }, 60_000);

  it('requestToken exchanges a code with HTTP Basic and rotates the refresh token (RFC 6749 4.1.3, 6); a wrong secret is invalid_client', async () => {
    const app: Fixture = await createFixture(server.ctx.db);
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, app.login, app.password)).status).toBe(303);
    const authorize = new URL('/oauth/authorize', server.baseUrl);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'user_info',
      state: 's1',
    }).toString();
    const code = (await authorizeInBrowser(browser, authorize)).searchParams.get('code')!;
    const out = await runInNode(
      project,
      'token.js',
      `import { createApiClient, requestToken } from 'openauth-workflows-client';
const [baseUrl, clientId, clientSecret, code, redirectUri, codeVerifier] = process.argv.slice(2);
const app = createApiClient(baseUrl, { basic: { clientId, clientSecret } });
const issued = await requestToken(app, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: codeVerifier });
const rotated = await requestToken(app, { grant_type: 'refresh_token', refresh_token: issued.data.refresh_token });
const stranger = createApiClient(baseUrl, { basic: { clientId, clientSecret: 'not-the-secret' } });
const refused = await requestToken(stranger, { grant_type: 'refresh_token', refresh_token: rotated.data.refresh_token });
const me = await createApiClient(baseUrl, { bearer: rotated.data.access_token }).GET('/api/open/v1/userinfo');
console.log(JSON.stringify({ issued: issued.data.token_type, rotated: rotated.data.refresh_token !== issued.data.refresh_token, refused: [refused.response.status, refused.error.error], login: me.data.login }));
`,
      [server.baseUrl, app.clientId, app.clientSecret, code, app.redirectUri, PKCE.verifier],
    );
    expect(out).toEqual({ issued: 'Bearer', rotated: true, refused: [401, 'invalid_client'], login: app.login });
  }, 60_000);

  it('chatCompletion answers the whole ChatCompletion and streamChatCompletion its chunks, ending with usage', async () => {
    const out = await runInNode(
      project,
      'chat.js',
      `import { chatCompletion, createApiClient, streamChatCompletion } from 'openauth-workflows-client';
const api = createApiClient(process.argv[2], { bearer: process.argv[3] });
const messages = [{ role: 'user', content: 'The export button does nothing.' }];
const whole = await chatCompletion(api, { model: 'echo', messages });
const streamed = await streamChatCompletion(api, { model: 'echo', messages }, { includeUsage: true });
const chunks = [];
for await (const chunk of streamed.data) chunks.push(chunk);
const unknown = await chatCompletion(api, { model: 'no-such-model', messages });
console.log(JSON.stringify({
  whole: whole.data.choices[0].message.content,
  streamed: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''),
  type: streamed.response.headers.get('content-type'),
  usage: chunks.at(-1).usage.total_tokens === whole.data.usage.total_tokens,
  unknown: [unknown.response.status, typeof unknown.error.error.message],
}));
`,
      [server.baseUrl, apiKey],
    );
    expect(out).toEqual({
      whole: 'The export button does nothing.',
      streamed: 'The export button does nothing.',
      type: expect.stringMatching(/^text\/event-stream/),
      usage: true,
      unknown: [404, 'string'],
    });
  }, 60_000);

  it('waitForRun waits with Prefer: wait until the run ends; followRunEvents replays its events to run.finished, and resumes after an id', async () => {
    const out = await runInNode(
      project,
      'runs.js',
      `import { createApiClient, followRunEvents, waitForRun } from 'openauth-workflows-client';
const api = createApiClient(process.argv[2], { bearer: process.argv[3] });
const workflow = await api.POST('/api/workflows', { body: { name: 'Waited for', ...${JSON.stringify(seedGraph())} } });
const run = { workflowId: workflow.data.data.id, runId: '' };
const started = await api.POST('/api/workflows/{workflow_id}/run', { params: { path: { workflow_id: run.workflowId } }, body: { inputs: { ticket: 'hello' } } });
run.runId = started.data.data.id;
const ended = await waitForRun(api, run, { timeoutSeconds: 30 });
const names = [];
for await (const e of (await followRunEvents(api, run)).data) names.push(e.id + ' ' + e.event);
const resumed = [];
for await (const e of (await followRunEvents(api, run, { lastEventId: '2' })).data) resumed.push(e.id);
const missing = await followRunEvents(api, { workflowId: run.workflowId, runId: 'run_nope' });
console.log(JSON.stringify({ status: ended.data.status, output: ended.data.output, names, resumed, missing: missing.response.status }));
`,
      [server.baseUrl, apiKey],
    );
    const { names, resumed, ...rest } = out as { names: string[]; resumed: string[] };
    expect(rest).toEqual({ status: 'completed', output: { result: 'hello' }, missing: 404 });
    expect(names[0]).toBe('1 run.status');
    expect(names.at(-1)).toMatch(/ run\.finished$/);
    expect(names.map((n) => n.split(' ')[1])).toContain('node.finished');
    expect(resumed).toEqual(names.slice(2).map((n) => n.split(' ')[0]));
  }, 60_000);

  it("type-checks an integrator's TypeScript (strict, exactOptionalPropertyTypes) using every helper without narrowing the chat union, and refuses a wrong path", () => {
    writeFileSync(
      path.join(project, 'check.ts'),
      `import { chatCompletion, createApiClient, followRunEvents, requestToken, streamChatCompletion, waitForRun, type Schemas } from 'openauth-workflows-client';
const api = createApiClient('http://localhost:3000', { bearer: 'sk_x' });
export async function poll(workflowId: string, runId: string): Promise<Schemas['RunStatus'] | undefined> {
  const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path: { workflow_id: workflowId, run_id: runId } } });
  const error: Schemas['RunError'] | null | undefined = data?.data.error;
  void error;
  return data?.data.status;
}
export async function all(workflowId: string, runId: string): Promise<string[]> {
  const out: string[] = [];
  const token = await requestToken(createApiClient('http://localhost:3000', { basic: { clientId: 'app_x', clientSecret: 'cs_x' } }), { grant_type: 'refresh_token', refresh_token: 'ghr_x' });
  out.push(token.data ? token.data.access_token : token.error.error);
  const whole = await chatCompletion(api, { model: 'echo', messages: [{ role: 'user', content: 'hi' }] });
  if (whole.data) out.push(whole.data.choices[0]?.message.content ?? '', String(whole.data.usage.total_tokens));
  const streamed = await streamChatCompletion(api, { model: 'echo', messages: [{ role: 'user', content: 'hi' }] });
  if (streamed.data) for await (const chunk of streamed.data) out.push(chunk.choices[0]?.delta.content ?? '');
  const ended = await waitForRun(api, { workflowId, runId });
  if (ended.data) out.push(ended.data.status);
  const events = await followRunEvents(api, { workflowId, runId });
  if (events.data) for await (const e of events.data) if (e.event === 'node.delta') out.push(e.data.text);
  return out;
}
// @ts-expect-error: not a path of openapi.yaml (unused, and so an error, if the types were any)
void api.GET('/api/no-such-path');
`,
    );
    expect(
      typeCheck(project, ['check.ts'], {
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
      }),
    ).toBe('');
  }, 180_000);

  it("type-checks the integrators' guide's example as written (strict, exactOptionalPropertyTypes, Node's types)", () => {
    const guide = readFileSync(path.join(root, 'docs/integrators.md'), 'utf8');
    const example = /```ts\n(import [^\n]*from 'openauth-workflows-client';[\s\S]*?)```/.exec(guide)?.[1];
    expect(example).toBeDefined();
    writeFileSync(path.join(project, 'readme.ts'), `${example}export {};\n`);
    expect(
      typeCheck(project, ['readme.ts'], {
        strict: true,
        exactOptionalPropertyTypes: true,
        types: ['node'],
        typeRoots: [path.join(root, 'node_modules/@types')],
      }),
    ).toBe('');
  }, 180_000);
  it('ships client/README.md and client/LICENSE (MIT, as package.json says) in the tarball', () => {
    const tarball = readdirSync(project).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const entries = execFileSync('tar', ['-tzf', path.join(project, tarball!)], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(entries).toEqual(
      expect.arrayContaining(['package/README.md', 'package/LICENSE', 'package/package.json', 'package/dist/index.js']),
    );
    const pkg = path.join(project, 'node_modules/openauth-workflows-client');
    expect(readFileSync(path.join(pkg, 'README.md'), 'utf8')).toBe(
      readFileSync(path.join(root, 'client/README.md'), 'utf8'),
    );
    expect(readFileSync(path.join(pkg, 'LICENSE'), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) \d{4} the openauth-workflows authors\n/,
    );
    expect((JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { license: string }).license).toBe(
      'MIT',
    );
  });

  it("type-checks every TypeScript snippet of the shipped README as written (strict, exactOptionalPropertyTypes, Node's types)", () => {
    const readme = readFileSync(path.join(project, 'node_modules/openauth-workflows-client/README.md'), 'utf8');
    const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    // Install, calls and answers, the token helper, creating and running, waiting and events, the gateway.
    expect(snippets.length).toBeGreaterThanOrEqual(5);
    for (const snippet of snippets) expect(snippet).toContain("from 'openauth-workflows-client';");
    const files = snippets.map((snippet, i) => {
      writeFileSync(path.join(project, `readme-${i + 1}.ts`), `${snippet}export {};\n`);
      return `readme-${i + 1}.ts`;
    });
    expect(
      typeCheck(project, files, {
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        types: ['node'],
        typeRoots: [path.join(root, 'node_modules/@types')],
      }),
    ).toBe('');
  }, 180_000);

  it('runs in a browser (Chromium, ES modules through an import map): a run waited for and followed, a streamed chat completion', async () => {
    const frontEnd = await startFrontEnd(project, server.baseUrl);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(frontEnd.url);
      await page.waitForFunction('typeof window.useClient === "function"');
      const out = await page.evaluate(`window.useClient(${JSON.stringify(apiKey)}, ${JSON.stringify(seedGraph())})`);
      expect(out).toEqual({ status: 'completed', last: 'run.finished', text: 'from a browser' });
    } finally {
      await browser.close();
      await frontEnd.close();
    }
  }, 60_000);
});
