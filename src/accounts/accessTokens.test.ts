import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { hashToken } from '../shared/crypto.ts';
import {
  createAccessToken,
  deleteAccessToken,
  findUsableAccessTokenByPlaintext,
  listAccessTokens,
  markAccessTokenUsed,
} from './accessTokens.ts';
import { addMember, createOrg } from './orgs.ts';
import { createUser, type User } from './users.ts';

describe.each(testDialects())('raw access tokens on %s', (dialect) => {
  let t: TestDb;
  let alice: User;
  let bob: User;
  beforeAll(async () => {
    t = await createTestDb(dialect);
    alice = await createUser(t, { login: 'alice', password: 'test-password-1' });
    bob = await createUser(t, { login: 'bob', password: 'test-password-1' });
    await createOrg(t, { namespace: 'team', name: 'Team', ownerLogin: 'alice' });
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it("expires at a given moment (the admin CLI's --expires-at) within 366 days; not in the past, not beside expires_in_days", async () => {
    const at = Date.now() + 5 * 86_400_000;
    const { record } = await createAccessToken(t, {
      userId: alice.id,
      namespace: 'alice',
      name: 'dated',
      usageScenario: 'paid',
      expiresAt: at,
    });
    expect(record.expires_at).toBe(at);
    const base = { userId: alice.id, namespace: 'alice', name: 'refused', usageScenario: 'paid' };
    for (const bad of [
      { expiresAt: Date.now() - 1000 },
      { expiresAt: Date.now() + 367 * 86_400_000 },
      { expiresAt: at, expiresInDays: 5 },
    ]) {
      await expect(createAccessToken(t, { ...base, ...bad })).rejects.toMatchObject({
        status: 400,
        errors: [{ pointer: '/expires_at' }],
      });
    }
    expect(await t.db('access_tokens').where({ name: 'refused' }).first()).toBeUndefined();
  });

  it('creates an sk_ token in the user namespace, returning the plaintext once and storing its hash', async () => {
    const { token, record } = await createAccessToken(t, {
      userLogin: 'alice',
      namespace: 'alice',
      name: 'laptop',
      usageScenario: 'paid',
      permissions: ['workflows', 'workflows'],
    });
    expect(token).toMatch(/^sk_[\w-]{43}$/);
    expect(record).toMatchObject({
      user_id: alice.id,
      namespace: 'alice',
      usage_scenario: 'paid',
      permissions: ['workflows'],
    });
    expect(record.token_prefix).toBe(token.slice(0, 10));
    const row = await t.db('access_tokens').where({ id: record.id }).first();
    expect(row.token_hash).toBe(hashToken(token));
    expect(JSON.stringify(row)).not.toContain(token);
  });

  it('creates tokens in an org namespace for its members only; others get 404', async () => {
    const { record } = await createAccessToken(t, {
      userId: alice.id,
      namespace: 'team',
      name: 'ci',
      usageScenario: 'trial',
    });
    expect(record.namespace).toBe('team');
    await expect(
      createAccessToken(t, { userId: bob.id, namespace: 'team', name: 'x', usageScenario: 'trial' }),
    ).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      createAccessToken(t, { userId: bob.id, namespace: 'alice', name: 'x', usageScenario: 'trial' }),
    ).rejects.toMatchObject({
      status: 404,
    });
    await addMember(t, 'team', 'bob');
    expect(
      (await createAccessToken(t, { userId: bob.id, namespace: 'team', name: 'bob-ci', usageScenario: 'paid' })).record
        .namespace,
    ).toBe('team');
  });

  it('rejects an unknown usage_scenario or permission (400)', async () => {
    await expect(
      createAccessToken(t, { userId: alice.id, namespace: 'alice', name: 'x', usageScenario: 'free' }),
    ).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      createAccessToken(t, {
        userId: alice.id,
        namespace: 'alice',
        name: 'x',
        usageScenario: 'paid',
        permissions: ['admin'],
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('lists only the user own tokens of the namespace as {id, name, usage_scenario}', async () => {
    const list = await listAccessTokens(t, alice.id, 'team');
    expect(list).toEqual([{ id: expect.any(Number), name: 'ci', usage_scenario: 'trial' }]);
    expect((await listAccessTokens(t, bob.id, 'team')).map((x) => x.name)).toEqual(['bob-ci']);
    await expect(listAccessTokens(t, bob.id, 'alice')).rejects.toMatchObject({ status: 404 });
  });

  it('finds a token by its plaintext, and a user token by namespace and id, but not someone else', async () => {
    const { token, record } = await createAccessToken(t, {
      userId: alice.id,
      namespace: 'alice',
      name: 'find',
      usageScenario: 'paid',
    });
    expect((await findUsableAccessTokenByPlaintext(t, token))?.id).toBe(record.id);
    expect(await findUsableAccessTokenByPlaintext(t, token + 'x')).toBeUndefined();
    const inList = async (userId: number, namespace: string) =>
      (await listAccessTokens(t, userId, namespace)).find((x) => x.id === record.id);
    expect((await inList(alice.id, 'alice'))?.name).toBe('find');
    expect(await inList(alice.id, 'team')).toBeUndefined();
    await expect(inList(bob.id, 'alice')).rejects.toMatchObject({ status: 404 });
  });

  it('records last use', async () => {
    const { token, record } = await createAccessToken(t, {
      userId: alice.id,
      namespace: 'alice',
      name: 'used',
      usageScenario: 'paid',
    });
    await markAccessTokenUsed(t, record.id, 1_700_000_000_000);
    expect((await findUsableAccessTokenByPlaintext(t, token))?.last_used_at).toBe(1_700_000_000_000);
  });

  it('deletes only the user own token; deleting someone else token is 404', async () => {
    const { token, record } = await createAccessToken(t, {
      userId: alice.id,
      namespace: 'alice',
      name: 'tmp',
      usageScenario: 'paid',
    });
    await expect(deleteAccessToken(t, bob.id, record.id)).rejects.toMatchObject({ status: 404 });
    await deleteAccessToken(t, alice.id, record.id);
    expect(await findUsableAccessTokenByPlaintext(t, token)).toBeUndefined();
    await expect(deleteAccessToken(t, alice.id, record.id)).rejects.toMatchObject({ status: 404 });
  });
});
