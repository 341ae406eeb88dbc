import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { createLocalJWKSet, decodeProtectedHeader, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config.ts';
import type { AppContext } from '../context.ts';
import { createKnex } from '../db/knex.ts';
import { createLogger } from '../http/logger.ts';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';
import { createSealer } from '../shared/sealing.ts';
import { signingKeyContext } from '../db/sealedSecrets.ts';
import { createAccessToken } from '../platform/accessTokens.ts';
import { createUser } from '../platform/users.ts';
import { insertAuthorization } from '../oauth/authorizations.store.ts';
import { createApp as createApplication } from '../platform/apps.ts';
import { signProxyToken, verifyProxyToken } from './proxyTokens.ts';
import { keyRing, publishedJwks, rotateSigningKey } from './signingKeys.ts';

const exec = promisify(execFile);

/** The order n of P-256 (SEC 2 secp256r1). */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

describe.each(testDialects())('proxy token signing keys on %s', (dialect) => {
  let t: TestDb;
  /** Two "API processes": separate pools (so separate key caches) on one database. */
  let a: AppContext;
  let b: AppContext;
  let subject: Parameters<typeof signProxyToken>[2];

  const sealer = createSealer(Buffer.from(TEST_SECRETS_KEY, 'base64'));
  const context = (db: AppContext['db']): AppContext => ({
    config: loadConfig({ NODE_ENV: 'test', BASE_URL: 'http://issuer.test' }),
    db,
    logger: createLogger({ level: 'silent' }),
    sealer,
    now: Date.now,
  });

  beforeAll(async () => {
    t = await createTestDb(dialect);
    a = context(t.db);
    b = context(createKnex(t.url, { poolMax: 5 }));
    const user = await createUser(t, { login: 'keys', password: 'password-1' });
    const { app } = await createApplication(t, { ownerUserId: user.id, name: 'App', description: 'd', homepage: 'https://a.test/', redirectUri: 'https://a.test/cb' });
    const authorizationId = await insertAuthorization(t.db, user.id, app.id, 'api_key', Date.now());
    const { record } = await createAccessToken(t, { userId: user.id, namespace: 'keys', name: 'k', usageScenario: 'paid' });
    subject = { userId: user.id, clientId: app.client_id, authorizationId, accessTokenId: record.id, namespace: 'keys', usageScenario: 'paid' };
  });
  afterAll(async () => {
    await b?.db.destroy();
    await t?.destroy();
  });

  it('creates the first key on first use, safely when two processes race: every key that signs is published', async () => {
    const [ka, kb] = await Promise.all([keyRing(a).signingKey(), keyRing(b).signingKey()]);
    const jwks = await publishedJwks(a);
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([ka.kid, kb.kid]));
    for (const [ctx, key] of [[a, ka], [b, kb]] as const) {
      const { token } = await signProxyToken(ctx, key, subject);
      // Each process verifies the other's tokens.
      expect(await verifyProxyToken(a, token)).toMatchObject({ accessTokenId: subject.accessTokenId });
      expect(await verifyProxyToken(b, token)).toMatchObject({ authorizationId: subject.authorizationId });
      await jwtVerify(token, createLocalJWKSet(jwks), { issuer: 'http://issuer.test', audience: 'http://issuer.test/serverless' });
    }
  });

  it('signs in JWS form (RFC 7518 3.4, the 64-byte r||s): 2,000 tokens verify against the published key with jose', async () => {
    // About one integer in 256 is under 32 bytes: 4,000 of them cover the zero-padded r and s of
    // RFC 7518 3.4 (all but once in millions).
    const key = await keyRing(a).signingKey();
    const jwks = createLocalJWKSet(await publishedJwks(a));
    for (let i = 0; i < 2000; i++) {
      const { token } = await signProxyToken(a, key, subject);
      expect(Buffer.from(token.split('.')[2]!, 'base64url').length).toBe(64);
      await jwtVerify(token, jwks, { issuer: 'http://issuer.test', audience: 'http://issuer.test/serverless' });
    }
  });

  it('stores the private key only in signing_keys, sealed with the key-encryption key, and never publishes it', async () => {
    const jwks = await publishedJwks(a);
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(key).not.toHaveProperty('d');
    }
    const row = await t.db('signing_keys').first();
    expect(row.private_jwk).toMatch(/^sealed:v1:/);
    expect(row.private_jwk).not.toContain('"d"');
    expect(JSON.parse(sealer.open(row.private_jwk, signingKeyContext(row.kid)))).toHaveProperty('d');
    // Bound to its row: the same sealed value under another kid does not open.
    expect(() => sealer.open(row.private_jwk, signingKeyContext('another-kid'))).toThrow(/sealed for another row/);
  });

  it('rotates with the admin CLI: the old key is retired but still verifies and is published, the new one signs', async () => {
    const old = await keyRing(a).signingKey();
    const { token: before } = await signProxyToken(a, old, subject);

    const { stdout } = await exec('sh', ['scripts/node.sh', 'src/cli/admin.ts', 'keys', 'rotate', '--json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', DATABASE_URL: t.url, SECRETS_KEY: TEST_SECRETS_KEY },
    });
    const out = JSON.parse(stdout) as { kid: string; retired: string[] };
    expect(out.retired).toContain(old.kid);
    expect(stdout).not.toMatch(/"d"/);
    expect((await t.db('signing_keys').where({ kid: old.kid }).first()).retired_at).not.toBeNull();

    const jwks = await publishedJwks(b);
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([old.kid, out.kid]));
    expect(await verifyProxyToken(b, before)).not.toBeNull();

    // A process that rotates itself switches at once.
    const again = await rotateSigningKey({ db: t.db, sealer });
    const { token: after } = await signProxyToken(a, await keyRing(a).signingKey(), subject);
    expect(decodeProtectedHeader(after).kid).toBe(again.kid);
    expect(await verifyProxyToken(b, after)).not.toBeNull();
    expect(await verifyProxyToken(b, before)).not.toBeNull();
  });

  it('remembers a verified token only until it expires, and never a forged one', async () => {
    const key = await keyRing(a).signingKey();
    const ttl = a.config.PROXY_TOKEN_TTL_SECONDS;
    // Expires two seconds from now: verified (and remembered) now, refused once the clock passes exp.
    const { token } = await signProxyToken(a, key, subject, Date.now() - (ttl - 2) * 1000);
    expect(await verifyProxyToken(a, token)).not.toBeNull();
    expect(await verifyProxyToken(a, token)).not.toBeNull();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3000 });
    try {
      expect(await verifyProxyToken(a, token)).toBeNull();
    } finally {
      vi.useRealTimers();
    }
    // Another signature on the same claims is not the remembered token.
    const [header, payload, signature] = token.split('.');
    const forged = `${header}.${payload}.${signature!.slice(0, -4)}${signature!.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    expect(await verifyProxyToken(a, forged)).toBeNull();
  });
  it('signs only low-S signatures and refuses the (r, n - s) twin of a valid token, which WebCrypto alone would accept (ECDSA malleability)', async () => {
    const key = await keyRing(a).signingKey();
    const jwks = createLocalJWKSet(await publishedJwks(a));
    const halfOrder = P256_ORDER / 2n;
    const sOf = (token: string) => BigInt(`0x${Buffer.from(token.split('.')[2]!, 'base64url').subarray(32).toString('hex')}`);
    // Without normalisation half the signatures are high-S: 200 all low is no accident.
    const tokens = await Promise.all(Array.from({ length: 200 }, () => signProxyToken(a, key, subject).then((p) => p.token)));
    for (const token of tokens) expect(sOf(token) <= halfOrder).toBe(true);

    const token = tokens[0]!;
    const [header, payload, signature] = token.split('.');
    const bytes = Buffer.from(signature!, 'base64url');
    Buffer.from((P256_ORDER - sOf(token)).toString(16).padStart(64, '0'), 'hex').copy(bytes, 32);
    const twin = `${header}.${payload}.${bytes.toString('base64url')}`;
    // The twin is a valid signature of the same claims (jose verifies it against the published key) ...
    await jwtVerify(twin, jwks, { issuer: 'http://issuer.test', audience: 'http://issuer.test/serverless' });
    // ... and the service refuses it, before and after it has verified the original.
    expect(await verifyProxyToken(b, twin)).toBeNull();
    expect(await verifyProxyToken(b, token)).not.toBeNull();
    expect(await verifyProxyToken(b, twin)).toBeNull();
    // Another spelling of the same signature bytes (a set trailing bit) is not ours either.
    const lastChar = signature!.at(-1)!;
    const respelled = `${header}.${payload}.${signature!.slice(0, -1)}${String.fromCharCode(lastChar.charCodeAt(0) + 1)}`;
    expect(Buffer.from(respelled.split('.')[2]!, 'base64url')).toEqual(Buffer.from(signature!, 'base64url'));
    expect(await verifyProxyToken(b, respelled)).toBeNull();
  });

  it('reads the keys at most once for a burst of unknown kids (a forged kid costs no query of its own), and still accepts a key another process created a moment ago', async () => {
    const rogue = await generateKeyPair('ES256');
    const forged = await Promise.all(Array.from({ length: 200 }, () => signProxyToken(a, { kid: randomBytes(32).toString('base64url'), key: rogue.privateKey }, subject)));
    await verifyProxyToken(a, (await signProxyToken(a, await keyRing(a).signingKey(), subject)).token); // the keys are loaded
    const keyQueries: string[] = [];
    const onQuery = (q: { sql: string }) => void (q.sql.includes('signing_keys') && keyQueries.push(q.sql));
    a.db.on('query', onQuery);
    try {
      const results = await Promise.all(forged.map((f) => verifyProxyToken(a, f.token)));
      expect(results.every((r) => r === null)).toBe(true);
      expect(keyQueries).toHaveLength(1);

      // Process b rotates right after a's read; a accepts b's first token with the new key.
      const rotated = await rotateSigningKey({ db: b.db, sealer });
      const fresh = await signProxyToken(b, await keyRing(b).signingKey(), subject);
      expect(decodeProtectedHeader(fresh.token).kid).toBe(rotated.kid);
      expect(await verifyProxyToken(a, fresh.token)).toMatchObject({ accessTokenId: subject.accessTokenId });
      expect(keyQueries).toHaveLength(2);
    } finally {
      a.db.off('query', onQuery);
    }
  });
});
