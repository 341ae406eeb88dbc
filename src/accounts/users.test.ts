import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import type * as CryptoModule from '../shared/crypto.ts';
import { verifyPassword } from '../shared/crypto.ts';
import { createOrg } from './orgs.ts';
import { createUser, findUserById, findUserByLogin, setPassword, verifyLogin } from './users.ts';

// The real verification, counted: what a login spends is the verifications it runs and the cost
// each hash names, not how long it took on this machine.
vi.mock('../shared/crypto.ts', async (importOriginal) => {
  const real = await importOriginal<typeof CryptoModule>();
  return { ...real, verifyPassword: vi.fn(real.verifyPassword) };
});

describe.each(testDialects())('users on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('creates a user whose login becomes its personal namespace', async () => {
    const user = await createUser(t, { login: 'alice', password: 'correct horse', name: 'Alice' });
    expect(user).toMatchObject({ login: 'alice', name: 'Alice' });
    expect(user.avatar_url).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(await t.db('namespaces').where({ name: 'alice' }).first()).toMatchObject({ user_id: user.id, org_id: null });
    expect(await findUserById(t, user.id)).toEqual(user);
  });

  it('stores the password only as a salted scrypt hash', async () => {
    const row = await t.db('users').where({ login: 'alice' }).first();
    expect(row.password_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[\w-]+\$[\w-]+$/);
    expect(row.password_hash).not.toContain('correct horse');
    const other = await createUser(t, { login: 'alice2', password: 'correct horse' });
    const otherRow = await t.db('users').where({ id: other.id }).first();
    expect(otherRow.password_hash).not.toBe(row.password_hash);
  });

  it('treats logins case-insensitively: stored lower case, found in any case, duplicates in another case are 409', async () => {
    const bob = await createUser(t, { login: 'Bob', password: 'test-password-1' });
    expect(bob.login).toBe('bob');
    expect((await findUserByLogin(t, 'BOB'))?.id).toBe(bob.id);
    await expect(createUser(t, { login: 'bOb', password: 'test-password-1' })).rejects.toMatchObject({ status: 409 });
  });

  it('refuses a login already taken by an organization namespace (409)', async () => {
    await createOrg(t, { namespace: 'acme', name: 'Acme', ownerLogin: 'alice' });
    await expect(createUser(t, { login: 'acme', password: 'test-password-1' })).rejects.toMatchObject({
      status: 409,
      code: 'name_taken',
    });
  });

  it.each(['', '-lead', 'trail-', 'has space', 'a'.repeat(40), 'under_score', 'dot.ted'])(
    'rejects the login %j (1-39 letters, digits, inner hyphens)',
    async (login) => {
      await expect(createUser(t, { login, password: 'test-password-1' })).rejects.toMatchObject({ status: 400 });
    },
  );

  it('accepts a 39-character login with inner hyphens', async () => {
    const login = `a-${'b'.repeat(35)}-c`;
    expect((await createUser(t, { login, password: 'test-password-1' })).login).toBe(login);
  });

  it('holds every new password to the policy (OWASP ASVS V2.1): 12+ characters, not a breached one, not the login; set-password too', async () => {
    const refused = (password: string, message: string) => ({
      status: 400,
      code: 'invalid_field',
      errors: [{ pointer: '/password', message }],
    });
    await expect(createUser(t, { login: 'shorty', password: 'short' })).rejects.toMatchObject(
      refused('short', 'must be at least 12 characters (a few words make a good one)'),
    );
    await expect(createUser(t, { login: 'shorty', password: 'password' })).rejects.toMatchObject({ status: 400 });
    await expect(createUser(t, { login: 'shorty', password: 'qwerty123456' })).rejects.toMatchObject(
      refused('', 'is one of the most common passwords, found in data breaches: choose another'),
    );
    await expect(createUser(t, { login: 'Shorty', password: 'shorty-shorty' })).rejects.toMatchObject(
      refused('', 'must not contain your login'),
    );
    expect(await findUserByLogin(t, 'shorty')).toBeUndefined();
    await createUser(t, { login: 'shorty', password: 'a tall story indeed' });
    await expect(setPassword(t, 'shorty', '12345678')).rejects.toMatchObject({ status: 400 });
    await expect(setPassword(t, 'shorty', 'my login is shorty')).rejects.toMatchObject(
      refused('', 'must not contain your login'),
    );
    expect(await verifyLogin(t, 'shorty', 'a tall story indeed')).not.toBeNull();
  });

  it('rejects an avatar_url that is not an http(s) URL', async () => {
    await expect(
      createUser(t, { login: 'pic', password: 'test-password-1', avatarUrl: 'javascript:alert(1)' }),
    ).rejects.toMatchObject({
      status: 400,
    });
  });

  it('verifies a login: right password gives the user, a wrong one or an unknown login gives null', async () => {
    expect((await verifyLogin(t, 'ALICE', 'correct horse'))?.login).toBe('alice');
    expect(await verifyLogin(t, 'alice', 'wrong horse')).toBeNull();
    expect(await verifyLogin(t, 'nobody', 'correct horse')).toBeNull();
  });

  it('spends a password hash on an unknown login too (no timing shortcut): one verification at the same cost as a known login', async () => {
    const verify = vi.mocked(verifyPassword);
    /** The scrypt parameters (`scrypt$N$r$p`) of each hash the login verified against. */
    const costsOf = async (login: string) => {
      verify.mockClear();
      expect(await verifyLogin(t, login, 'wrong password')).toBeNull();
      return verify.mock.calls.map(([, stored]) => stored.split('$').slice(0, 4).join('$'));
    };
    const known = await costsOf('alice');
    expect(known).toHaveLength(1);
    expect(known[0]).toMatch(/^scrypt\$\d+\$\d+\$\d+$/);
    expect(await costsOf('nobody')).toEqual(known);
    expect(await costsOf('nobody')).toEqual(known); // every unknown login, not only the first (which makes the dummy hash)
  });
});
