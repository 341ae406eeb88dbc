import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { hashToken } from '../shared/crypto.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';

const exec = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe.each(testDialects())('admin CLI on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function admin(...args: string[]): Promise<CliResult> {
    try {
      const { stdout, stderr } = await exec('sh', ['scripts/node.sh', 'src/cli/admin.ts', ...args], {
        // Not process.env: vitest puts Vite's BASE_URL=/ (and MODE, DEV ...) there.
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', DATABASE_URL: t.url, SECRETS_KEY: TEST_SECRETS_KEY },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  async function adminJson(...args: string[]): Promise<Record<string, unknown>> {
    const result = await admin(...args, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  }

  it('creates a user, an org, an app and a token, each printing one JSON object', async () => {
    const user = await adminJson('user', 'create', '--login', 'cli-user', '--password', 'cli-password', '--name', 'CLI User');
    expect(user).toMatchObject({ id: expect.any(Number), login: 'cli-user', name: 'CLI User' });

    const org = await adminJson('org', 'create', '--namespace', 'cli-org', '--name', 'CLI Org', '--owner', 'cli-user');
    expect(org).toMatchObject({ id: expect.any(Number), namespace: 'cli-org' });

    const app = await adminJson(
      'app', 'create', '--owner', 'cli-user', '--name', 'CLI App', '--description', 'From the CLI',
      '--homepage', 'https://cli.example', '--redirect-uri', 'https://cli.example/callback',
    );
    expect(app).toMatchObject({ client_id: expect.stringMatching(/^app_/), client_secret: expect.stringMatching(/^cs_/) });

    const token = await adminJson(
      'token', 'create', '--user', 'cli-user', '--namespace', 'cli-org', '--name', 'ci',
      '--usage-scenario', 'paid', '--permission', 'workflows',
    );
    expect(token).toMatchObject({ id: expect.any(Number), token: expect.stringMatching(/^sk_/), permissions: ['workflows'] });

    // What the CLI printed once is stored only as hashes.
    const appRow = await t.db('applications').where({ client_id: app.client_id }).first();
    expect(appRow.client_secret_hash).toBe(hashToken(app.client_secret as string));
    const tokenRow = await t.db('access_tokens').where({ id: token.id }).first();
    expect(tokenRow.token_hash).toBe(hashToken(token.token as string));

    const list = await adminJson('token', 'list', '--user', 'cli-user', '--namespace', 'cli-org');
    expect(list).toEqual({ data: [{ id: token.id, name: 'ci', usage_scenario: 'paid' }] });
  });

  it('adds a member to an org', async () => {
    await adminJson('user', 'create', '--login', 'cli-member', '--password', 'cli-password', '--name', 'Member');
    expect(await adminJson('org', 'add-member', '--namespace', 'cli-org', '--login', 'cli-member')).toMatchObject({ role: 'member' });
  });

  it('exits 1 with a message on stderr when the service refuses (duplicate login)', async () => {
    const result = await admin('user', 'create', '--login', 'cli-user', '--password', 'cli-password', '--name', 'Again', '--json');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/already taken/);
  });

  it('exits 2 on bad usage: missing options, unknown command or option', async () => {
    for (const args of [['user', 'create', '--login', 'x'], ['user', 'explode'], ['user', 'create', '--bogus']]) {
      const result = await admin(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--help/);
    }
  });

  it('prints usage with --help', async () => {
    const result = await admin('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/token create --user LOGIN --namespace NS/);
  });

  it('reports migrations as already applied', async () => {
    expect(await adminJson('migrate')).toEqual({ applied: [] });
  });
});
