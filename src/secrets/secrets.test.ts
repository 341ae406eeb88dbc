// Per-user secrets through a real HTTP server and a real database (PostgreSQL; MySQL too when
// TEST_MYSQL_URL is set), called with the typed client integrators use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import { startTestServer } from '../../test/support/server.ts';
import { testDialects } from '../../test/support/db.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { isSealed } from '../shared/sealing.ts';
import { sealAllSecrets } from '../db/sealedSecrets.ts';
import { MAX_SECRETS_PER_USER, openSecrets } from './service.ts';

const VALUE = 'ghp_s3cret-value-that-must-never-leak';

describe.each(testDialects())('per-user secrets on %s', (dialect) => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let alice: ApiClient;
  let bob: ApiClient;
  let aliceId: number;
  let aliceKey: string;
  let noPermissionKey: string;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    aliceId = (await createUser(server.ctx, { login: 'alice', password: 'correct horse battery' })).id;
    const bobId = (await createUser(server.ctx, { login: 'bob', password: 'correct horse battery' })).id;
    const key = async (userId: number, namespace: string, permissions: string[]) =>
      (await createAccessToken(server.ctx, { userId, namespace, name: 'k', usageScenario: 'paid', permissions })).token;
    aliceKey = await key(aliceId, 'alice', ['workflows']);
    noPermissionKey = await key(aliceId, 'alice', []);
    alice = createApiClient(server.baseUrl, { bearer: aliceKey });
    bob = createApiClient(server.baseUrl, { bearer: await key(bobId, 'bob', ['workflows']) });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates (201 + Location), replaces (200) and lists names without values', async () => {
    const created = await alice.PUT('/api/secrets/{secret_name}', {
      params: { path: { secret_name: 'GITHUB_TOKEN' } },
      body: { value: VALUE },
    });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('Location')).toBe('/api/secrets/GITHUB_TOKEN');
    expect(created.data?.data).toEqual({
      name: 'GITHUB_TOKEN',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const replaced = await alice.PUT('/api/secrets/{secret_name}', {
      params: { path: { secret_name: 'GITHUB_TOKEN' } },
      body: { value: `${VALUE}-2` },
    });
    expect(replaced.response.status).toBe(200);
    await alice.PUT('/api/secrets/{secret_name}', {
      params: { path: { secret_name: 'A_FIRST' } },
      body: { value: 'a' },
    });
    const list = await alice.GET('/api/secrets');
    expect(list.data?.data.map((s) => s.name)).toEqual(['A_FIRST', 'GITHUB_TOKEN']);
    expect(JSON.stringify(list.data)).not.toContain('ghp_');
    expect(await openSecrets(server.ctx, aliceId, ['GITHUB_TOKEN', 'NOT_THERE'])).toEqual(
      new Map([['GITHUB_TOKEN', `${VALUE}-2`]]),
    );
  });

  it('seals values at rest with the key-encryption key, bound to their row, and reseals them on key rotation', async () => {
    const rows = (await server.ctx.db('user_secrets').select('id', 'value')) as { id: number; value: string }[];
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(isSealed(row.value)).toBe(true);
      expect(row.value).not.toContain('ghp_');
    }
    // A sealed value copied into another row does not open there.
    const [a, b] = rows;
    await server.ctx.db('user_secrets').where({ id: b!.id }).update({ value: a!.value });
    await expect(openSecrets(server.ctx, aliceId, ['A_FIRST', 'GITHUB_TOKEN'])).rejects.toThrow(/does not open/);
    await server.ctx.db('user_secrets').where({ id: b!.id }).update({ value: b!.value });
    // `admin secrets reseal` covers them: nothing to reseal with the current key.
    const report = await sealAllSecrets(server.ctx.db, server.ctx.sealer);
    expect(report.sealed).toBe(0);
    expect(report.unchanged).toBeGreaterThanOrEqual(rows.length);
  });

  it('never logs a value', async () => {
    await alice.PUT('/api/secrets/{secret_name}', {
      params: { path: { secret_name: 'LOGGED' } },
      body: { value: 'canary-9f8e7d6c' },
    });
    expect(server.logs.join('\n')).not.toContain('canary-9f8e7d6c');
  });

  it('keeps each user to their own secrets: another user’s name is theirs, deleting it is 404', async () => {
    expect((await bob.GET('/api/secrets')).data?.data).toEqual([]);
    const del = await bob.DELETE('/api/secrets/{secret_name}', { params: { path: { secret_name: 'GITHUB_TOKEN' } } });
    expect(del.response.status).toBe(404);
    expect(del.error).toMatchObject({ code: 'secret_not_found' });
    expect(await openSecrets(server.ctx, aliceId, ['GITHUB_TOKEN'])).toHaveProperty('size', 1);
  });

  it('deletes (204), then the name is 404', async () => {
    const del = await alice.DELETE('/api/secrets/{secret_name}', { params: { path: { secret_name: 'A_FIRST' } } });
    expect(del.response.status).toBe(204);
    const again = await alice.DELETE('/api/secrets/{secret_name}', { params: { path: { secret_name: 'A_FIRST' } } });
    expect(again.response.status).toBe(404);
  });

  it('refuses a bad name or value with 400, a key without the workflows permission with 403', async () => {
    const raw = (name: string, body: unknown, bearer = aliceKey) =>
      fetch(`${server.baseUrl}/api/secrets/${name}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await raw('1BAD', { value: 'x' })).status).toBe(400);
    expect((await raw('has-dash', { value: 'x' })).status).toBe(400);
    expect((await raw('OK', { value: '' })).status).toBe(400);
    expect((await raw('OK', { value: 'two\nlines' })).status).toBe(400);
    expect((await raw('OK', { value: 'x', extra: 1 })).status).toBe(400);
    expect((await raw('OK', { value: 'x' }, noPermissionKey)).status).toBe(403);
  });

  it(`allows at most ${MAX_SECRETS_PER_USER} secrets per user (409 too_many_secrets); replacing one is always allowed`, async () => {
    const have = (await alice.GET('/api/secrets')).data!.data.length;
    const now = Date.now();
    await server.ctx.db('user_secrets').insert(
      Array.from({ length: MAX_SECRETS_PER_USER - have }, (_, i) => ({
        user_id: aliceId,
        name: `FILL_${i}`,
        value: 'x',
        created_at: now,
        updated_at: now,
      })),
    );
    const more = await alice.PUT('/api/secrets/{secret_name}', {
      params: { path: { secret_name: 'ONE_MORE' } },
      body: { value: 'x' },
    });
    expect(more.response.status).toBe(409);
    expect(more.error).toMatchObject({ code: 'too_many_secrets' });
    const replace = await alice.PUT('/api/secrets/{secret_name}', {
      params: { path: { secret_name: 'GITHUB_TOKEN' } },
      body: { value: VALUE },
    });
    expect(replace.response.status).toBe(200);
    await server.ctx.db('user_secrets').where('name', 'like', 'FILL_%').delete();
  });
});
