import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';
import { DEFAULT_PASSWORD_HASH_COST, setPasswordHashCost } from '../shared/crypto.ts';
import { TEST_PASSWORD_HASH_COST } from '../../test/support/passwordCost.ts';
import { Browser, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';
import { createUser } from './users.ts';

// Passwords are hashed with scrypt at OWASP's minimum (N=2^17, r=8, p=1) unless an operator
// outside production lowers PASSWORD_HASH_COST (the rest of the suite does: 2^10); a hash made at
// an older, cheaper cost is replaced at the next successful login, when the password is known.

const storedHash = async (server: TestServer, login: string) =>
  String((await server.ctx.db('users').where({ login }).first('password_hash')).password_hash);

describe('password hashing at OWASP minimum, with upgrade at login', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    // What main.ts and the admin CLI do with the configuration, here with its default.
    setPasswordHashCost(server.ctx.config.PASSWORD_HASH_COST);
  });
  afterAll(async () => {
    setPasswordHashCost(TEST_PASSWORD_HASH_COST);
    await server?.close();
  });

  it('defaults to scrypt N=2^17, r=8, p=1 and refuses less in production', () => {
    expect(loadConfig({}).PASSWORD_HASH_COST).toBe(17);
    expect(DEFAULT_PASSWORD_HASH_COST).toBe(17);
    expect(() =>
      loadConfig({ NODE_ENV: 'production', SECRETS_KEY: TEST_SECRETS_KEY, PASSWORD_HASH_COST: '15' }),
    ).toThrow(ConfigError);
    expect(() =>
      loadConfig({ NODE_ENV: 'production', SECRETS_KEY: TEST_SECRETS_KEY, PASSWORD_HASH_COST: '15' }),
    ).toThrow(/PASSWORD_HASH_COST: at least 17 in production/);
    expect(
      loadConfig({ NODE_ENV: 'production', SECRETS_KEY: TEST_SECRETS_KEY, PASSWORD_HASH_COST: '18' })
        .PASSWORD_HASH_COST,
    ).toBe(18);
  });

  it('upgrades a hash made at an older cost (N=2^15) to N=2^17 at the next successful login, not at a failed one', async () => {
    // A user whose password was hashed by an earlier version (N=2^15, as it shipped).
    setPasswordHashCost(15);
    await createUser(server.ctx, { login: 'legacy', password: 'old-password-1' });
    setPasswordHashCost(server.ctx.config.PASSWORD_HASH_COST);
    const old = await storedHash(server, 'legacy');
    expect(old).toMatch(/^scrypt\$32768\$8\$1\$/);

    expect((await logIn(new Browser(server.baseUrl), 'legacy', 'wrong-password')).status).toBe(401);
    expect(await storedHash(server, 'legacy')).toBe(old);

    expect((await logIn(new Browser(server.baseUrl), 'legacy', 'old-password-1')).status).toBe(303);
    const upgraded = await storedHash(server, 'legacy');
    expect(upgraded).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);

    // The new hash opens the same password, and is left alone from now on.
    expect((await logIn(new Browser(server.baseUrl), 'legacy', 'old-password-1')).status).toBe(303);
    expect(await storedHash(server, 'legacy')).toBe(upgraded);
    expect((await logIn(new Browser(server.baseUrl), 'legacy', 'wrong-password')).status).toBe(401);
  });
});
