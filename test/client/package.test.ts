// The client package as an integrator gets it: `npm pack` of client/, installed into an empty
// project, loaded by plain Node >= 20 (the machine's /usr/bin/node when it has one, as
// integrators' machines do), type-checked by tsc, and used against the real service.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { apiKeyFor } from '../faults/support/fixtures.ts';
import { seedGraph } from '../support/seedWorkflow.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
// Plain Node of the integrator's kind: no TypeScript stripping, no flags.
const plainNode = existsSync('/usr/bin/node') ? '/usr/bin/node' : process.execPath;
const { BASE_URL: _vite, ...env } = process.env; // vitest sets BASE_URL=/ for Vite

describe(`the client package (npm pack, installed in an empty project, Node ${execFileSync(plainNode, ['-v'], { encoding: 'utf8' }).trim()})`, () => {
  let project: string;
  let server: TestServer;
  let apiKey: string;

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build-client.ts'], { cwd: root, stdio: 'pipe' });
    project = mkdtempSync(path.join(tmpdir(), 'oa-client-'));
    const tarball = execFileSync('npm', ['pack', path.join(root, 'client'), '--pack-destination', project, '--silent'], { cwd: project, encoding: 'utf8', env }).trim().split('\n').pop()!;
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
    execFileSync('npm', ['install', `./${tarball}`, '--no-audit', '--no-fund', '--prefer-offline', '--silent'], { cwd: project, env, stdio: 'pipe' });
    server = await startTestServer();
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

  it('runs in plain Node: creates a workflow, reads it back and lists it', async () => {
    writeFileSync(
      path.join(project, 'main.js'),
      `import { createApiClient } from 'openauth-workflows-client';
const api = createApiClient(process.argv[2], { bearer: process.argv[3] });
const created = await api.POST('/api/workflows', { body: { name: 'From the package', ...${JSON.stringify(seedGraph())} } });
const read = await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: created.data.data.id } } });
const list = await api.GET('/api/workflows', { params: { query: { search: 'From the package' } } });
console.log(JSON.stringify({ created: created.response.status, name: read.data.data.name, total: list.data.meta.total }));
`,
    );
    // Asynchronously: the service runs in this process and must keep answering.
    const { stdout: out } = await promisify(execFile)(plainNode, ['main.js', server.baseUrl, apiKey], { cwd: project, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ created: 201, name: 'From the package', total: 1 });
  }, 60_000);

  it('type-checks an integrator\'s TypeScript against the shipped declarations (and refuses a wrong path)', () => {
    writeFileSync(
      path.join(project, 'check.ts'),
      `import { createApiClient, type Schemas } from 'openauth-workflows-client';
const api = createApiClient('http://localhost:3000', { bearer: 'sk_x' });
export async function poll(workflowId: string, runId: string): Promise<Schemas['RunStatus'] | undefined> {
  const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path: { workflow_id: workflowId, run_id: runId } } });
  const error: Schemas['RunError'] | null | undefined = data?.data.error;
  void error;
  return data?.data.status;
}
// @ts-expect-error: not a path of openapi.yaml (unused, and so an error, if the types were any)
void api.GET('/api/no-such-path');
`,
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] }, files: ['check.ts'] }),
    );
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    const result = (() => {
      try {
        return execFileSync(process.execPath, [tsc, '-p', project], { cwd: project, encoding: 'utf8' });
      } catch (err) {
        return (err as { stdout: string }).stdout;
      }
    })();
    expect(result).toBe('');
  }, 180_000);
});
