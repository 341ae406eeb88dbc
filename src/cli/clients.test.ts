import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';
import { TEST_PASSWORD_HASH_COST } from '../../test/support/passwordCost.ts';
import { hashToken } from '../shared/crypto.ts';
import { createUser } from '../accounts/users.ts';
import { createApp, createRegisteredApp } from '../accounts/apps.ts';

// The admin CLI's commands for self-registered clients and initial access tokens, run as the
// operator runs them (a child process on the database), on each store.

const exec = promisify(execFile);

describe.each(testDialects())('admin CLI: registered clients and registration tokens on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function admin(...args: string[]): Promise<{ code: number; stdout: string }> {
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      SECRETS_KEY: TEST_SECRETS_KEY,
      PASSWORD_HASH_COST: String(TEST_PASSWORD_HASH_COST),
      DATABASE_URL: t.url,
    };
    try {
      const { stdout } = await exec('sh', ['scripts/node.sh', 'src/cli/admin.ts', ...args, '--json'], { env });
      return { code: 0, stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, stdout: e.stdout };
    }
  }
  const json = async (...args: string[]) => {
    const result = await admin(...args);
    expect(result.code, result.stdout).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };

  it('creates an initial access token shown once and stored hashed, lists it without the token, and revokes it', async () => {
    const made = await json('registration-token', 'create', '--name', 'ci', '--expires-in', '7');
    expect(made.token).toMatch(/^iat_/);
    expect(Date.parse(String(made.expires_at))).toBeGreaterThan(Date.now());
    const row = await t.db('client_registration_tokens').where({ id: made.id }).first();
    expect(row.token_hash).toBe(hashToken(String(made.token)));
    const listed = (await json('registration-token', 'list')).data as Record<string, unknown>[];
    expect(listed.find((r) => r.id === made.id)).toEqual({
      id: made.id,
      name: 'ci',
      created_at: expect.any(String),
      expires_at: made.expires_at,
    });
    expect(JSON.stringify(listed)).not.toContain(String(made.token));
    expect(await json('registration-token', 'revoke', '--id', String(made.id))).toEqual({ revoked: true, id: made.id });
    expect((await admin('registration-token', 'revoke', '--id', String(made.id))).code).not.toBe(0);
    expect((await admin('registration-token', 'create', '--name', 'x', '--expires-in', '0')).code).toBe(2);
  });

  it('lists the self-registered clients with their users, and deletes one with its grants; a console app is not one', async () => {
    const user = await createUser(
      { db: t.db },
      { login: `cli${Date.now()}`, password: 'correct horse battery', name: 'U' },
    );
    const { app } = await createRegisteredApp(
      { db: t.db },
      {
        kind: 'dynamic',
        name: 'Registered Tool',
        homepage: '',
        redirectUris: ['http://127.0.0.1/cb'],
        tokenEndpointAuthMethod: 'none',
        idTokenAlg: 'RS256',
        metadata: {},
        registrationAccessTokenHash: hashToken('rat_x'),
      },
    );
    await t
      .db('authorizations')
      .insert({ user_id: user.id, application_id: app.id, scope: 'user_info', created_at: Date.now() });
    const listed = (await json('client', 'list')).data as Record<string, unknown>[];
    expect(listed.find((c) => c.client_id === app.client_id)).toEqual({
      client_id: app.client_id,
      name: 'Registered Tool',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1/cb'],
      created_at: expect.any(String),
      last_used_at: null,
      users: 1,
    });
    const owned = await createApp(
      { db: t.db },
      {
        ownerUserId: user.id,
        name: 'Console',
        description: '',
        homepage: 'https://a.example/',
        redirectUri: 'https://a.example/cb',
      },
    );
    expect((await admin('client', 'delete', '--client-id', owned.app.client_id)).code).toBe(1);
    expect(await json('client', 'delete', '--client-id', app.client_id)).toEqual({
      deleted: true,
      client_id: app.client_id,
    });
    expect(await t.db('applications').where({ id: app.id }).first()).toBeUndefined();
    expect(await t.db('authorizations').where({ application_id: app.id }).first()).toBeUndefined();
  });
});
