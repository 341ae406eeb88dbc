import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { CompactSign, createLocalJWKSet, decodeProtectedHeader, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config.ts';
import type { AppContext } from '../context.ts';
import { createKnex } from '../db/knex.ts';
import { createLogger } from '../http/logger.ts';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';
import { createSealer } from '../shared/sealing.ts';
import { signingKeyContext } from '../db/sealedSecrets.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { insertAuthorization } from '../oauth/authorizations.store.ts';
import { createApp as createApplication } from '../accounts/apps.ts';
import { signProxyToken, verifyProxyToken } from './proxyTokens.ts';
import {
  KEY_PUBLISHED_AHEAD_MS,
  keyRing,
  publishedJwks,
  rotateSigningKeys,
  SIGNING_ALGS,
  type RotatedKey,
} from './signingKeys.ts';

const exec = promisify(execFile);

const es256Of = (rotated: RotatedKey[]): RotatedKey => rotated.find((r) => r.alg === 'ES256')!;

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
    const user = await createUser(t, { login: 'keys', password: 'test-password-1' });
    const { app } = await createApplication(t, {
      ownerUserId: user.id,
      name: 'App',
      description: 'd',
      homepage: 'https://a.test/',
      redirectUri: 'https://a.test/cb',
    });
    const authorizationId = await insertAuthorization(t.db, user.id, app.id, 'api_key', Date.now());
    const { record } = await createAccessToken(t, {
      userId: user.id,
      namespace: 'keys',
      name: 'k',
      usageScenario: 'paid',
    });
    subject = {
      userId: user.id,
      clientId: app.client_id,
      authorizationId,
      accessTokenId: record.id,
      namespace: 'keys',
      usageScenario: 'paid',
    };
  });
  afterAll(async () => {
    await b?.db.destroy();
    await t?.destroy();
  });

  it('creates the first key on first use, safely when two processes race: every key that signs is published', async () => {
    const [ka, kb] = await Promise.all([keyRing(a).signingKey('ES256'), keyRing(b).signingKey('ES256')]);
    const jwks = await publishedJwks(a);
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([ka.kid, kb.kid]));
    for (const [ctx, key] of [
      [a, ka],
      [b, kb],
    ] as const) {
      const { token } = await signProxyToken(ctx, key, subject);
      // Each process verifies the other's tokens.
      expect(await verifyProxyToken(a, token)).toMatchObject({ accessTokenId: subject.accessTokenId });
      expect(await verifyProxyToken(b, token)).toMatchObject({ authorizationId: subject.authorizationId });
      await jwtVerify(token, createLocalJWKSet(jwks), {
        issuer: 'http://issuer.test',
        audience: 'http://issuer.test/serverless',
      });
    }
  });

  it('signs in JWS form (RFC 7518 3.4, the 64-byte r||s): 2,000 tokens verify against the published key with jose', async () => {
    // About one integer in 256 is under 32 bytes: 4,000 of them cover the zero-padded r and s of
    // RFC 7518 3.4 (all but once in millions).
    const key = await keyRing(a).signingKey('ES256');
    const jwks = createLocalJWKSet(await publishedJwks(a));
    for (let i = 0; i < 2000; i++) {
      const { token } = await signProxyToken(a, key, subject);
      expect(Buffer.from(token.split('.')[2]!, 'base64url').length).toBe(64);
      await jwtVerify(token, jwks, { issuer: 'http://issuer.test', audience: 'http://issuer.test/serverless' });
    }
  });

  it('stores the private key only in signing_keys, sealed with the key-encryption key, and never publishes it', async () => {
    const jwks = await publishedJwks(a);
    for (const key of jwks.keys.filter((k) => k.alg === 'ES256')) {
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(key).not.toHaveProperty('d');
    }
    const row = await t.db('signing_keys').where({ alg: 'ES256' }).first();
    expect(row.private_jwk).toMatch(/^sealed:v1:/);
    expect(row.private_jwk).not.toContain('"d"');
    expect(JSON.parse(sealer.open(row.private_jwk, signingKeyContext(row.kid)))).toHaveProperty('d');
    // Bound to its row: the same sealed value under another kid does not open.
    expect(() => sealer.open(row.private_jwk, signingKeyContext('another-kid'))).toThrow(/sealed for another row/);
  });

  it('rotates with the admin CLI: the new key is published at once and signs from active_from, when the old one retires; the old one still verifies and is published', async () => {
    const old = await keyRing(a).signingKey('ES256');
    const { token: before } = await signProxyToken(a, old, subject);

    const rotatedAt = Date.now();
    const { stdout } = await exec('sh', ['scripts/node.sh', 'src/cli/admin.ts', 'keys', 'rotate', '--json'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'test',
        DATABASE_URL: t.url,
        SECRETS_KEY: TEST_SECRETS_KEY,
      },
    });
    const out = JSON.parse(stdout) as {
      kid: string;
      retired: string[];
      rotated: Array<{ alg: string; kid: string; active_from: string; retired: string[] }>;
    };
    expect(out.retired).toContain(old.kid);
    // Every algorithm's key is rotated; `kid` and `retired` are the ES256 key's, as before RS256 keys.
    expect(out.rotated.map((r) => r.alg).sort()).toEqual(['ES256', 'RS256']);
    const es = out.rotated.find((r) => r.alg === 'ES256')!;
    expect(es).toEqual({ alg: 'ES256', kid: out.kid, active_from: expect.any(String), retired: out.retired });
    const activeFrom = Date.parse(es.active_from);
    expect(activeFrom - rotatedAt).toBeGreaterThanOrEqual(KEY_PUBLISHED_AHEAD_MS - 1000);
    expect(stdout).not.toMatch(/"d"/);
    expect(Number((await t.db('signing_keys').where({ kid: old.kid }).first()).retired_at)).toBe(activeFrom);

    // Published from the rotation on, before it signs anything.
    const jwks = await publishedJwks(b);
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([old.kid, out.kid]));
    expect(await verifyProxyToken(b, before)).not.toBeNull();
    keyRing(a).forget();
    const stillSigning = (await keyRing(a).signingKey('ES256')).kid;
    expect(out.retired).toContain(stillSigning);
    // From active_from on (each process within its key cache's minute), the new key signs.
    vi.useFakeTimers({ toFake: ['Date'], now: activeFrom + 61_000 });
    try {
      const { token: rotatedIn } = await signProxyToken(a, await keyRing(a).signingKey('ES256'), subject);
      expect(decodeProtectedHeader(rotatedIn).kid).toBe(out.kid);
      expect(await verifyProxyToken(b, rotatedIn)).not.toBeNull();
      expect(await verifyProxyToken(b, before)).not.toBeNull();
    } finally {
      vi.useRealTimers();
      // Their caches were filled in the clock's future.
      keyRing(a).forget();
      keyRing(b).forget();
    }

    // --now (a leaked key): a process that rotates itself switches at once.
    const again = es256Of(await rotateSigningKeys({ db: t.db, sealer }, SIGNING_ALGS, { immediately: true }));
    const { token: after } = await signProxyToken(a, await keyRing(a).signingKey('ES256'), subject);
    expect(decodeProtectedHeader(after).kid).toBe(again.kid);
    expect(await verifyProxyToken(b, after)).not.toBeNull();
    expect(await verifyProxyToken(b, before)).not.toBeNull();
  });

  it('makes an RS256 key of its own on first use: RSA of 2048 bits, published with kid, alg and use beside the EC key, its private key sealed at rest', async () => {
    const rsa = await keyRing(a).signingKey('RS256');
    const ec = await keyRing(a).signingKey('ES256');
    expect(rsa).toMatchObject({ alg: 'RS256' });
    expect(rsa.kid).not.toBe(ec.kid);
    // Another process finds the same key: one current key per algorithm.
    expect((await keyRing(b).signingKey('RS256')).kid).toBe(rsa.kid);

    const jwks = await publishedJwks(b);
    const published = jwks.keys.find((k) => k.kid === rsa.kid)!;
    expect(published).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(Buffer.from(published.n!, 'base64url').length * 8).toBeGreaterThanOrEqual(2048);
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(published).not.toHaveProperty(member);
    expect(jwks.keys.find((k) => k.kid === ec.kid)).toMatchObject({ kty: 'EC', alg: 'ES256' });

    const row = await t.db('signing_keys').where({ kid: rsa.kid }).first();
    expect(row.alg).toBe('RS256');
    expect(row.private_jwk).toMatch(/^sealed:v1:/);
    const opened = JSON.parse(sealer.open(row.private_jwk, signingKeyContext(row.kid))) as Record<string, string>;
    expect(opened).toMatchObject({ kty: 'RSA', kid: rsa.kid, alg: 'RS256' });
    // The raw row, every column as the database gives it, holds none of the private members.
    const raw = JSON.stringify(row);
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) {
      expect(opened[member]!.length).toBeGreaterThan(100);
      expect(raw).not.toContain(opened[member]!);
    }
    expect(() => sealer.open(row.private_jwk, signingKeyContext(ec.kid))).toThrow(/sealed for another row/);

    // It signs RS256 JWTs that verify against the published keys.
    const jws = await new CompactSign(
      new TextEncoder().encode(
        JSON.stringify({ iss: 'http://issuer.test', aud: 'client', exp: Math.floor(Date.now() / 1000) + 60 }),
      ),
    )
      .setProtectedHeader({ alg: 'RS256', kid: rsa.kid, typ: 'JWT' })
      .sign(rsa.key);
    await jwtVerify(jws, createLocalJWKSet(jwks), {
      issuer: 'http://issuer.test',
      audience: 'client',
      algorithms: ['RS256'],
    });
  });

  it('never lets the RSA key sign or pass for a proxy token', async () => {
    const rsa = await keyRing(a).signingKey('RS256');
    // signProxyToken's type refuses a SigningKey<'RS256'>; spelled out, jose refuses the key for ES256.
    await expect(signProxyToken(a, { kid: rsa.kid, key: rsa.key }, subject)).rejects.toThrow();
    // A token in the proxy token's shape signed with the (published) RSA key is refused by the gateway's check.
    const { token } = await signProxyToken(a, await keyRing(a).signingKey('ES256'), subject);
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    const withRsa = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'RS256', kid: rsa.kid, typ: 'at+jwt' })
      .sign(rsa.key);
    expect(await verifyProxyToken(a, withRsa)).toBeNull();
    expect(await verifyProxyToken(b, withRsa)).toBeNull();
  });

  it('rotates one algorithm alone: the other keeps its current key, the retired key stays published', async () => {
    const rsa = await keyRing(a).signingKey('RS256');
    const ec = await keyRing(a).signingKey('ES256');
    const [rotated, ...others] = await rotateSigningKeys({ db: t.db, sealer }, ['RS256'], { immediately: true });
    expect(others).toEqual([]);
    expect(rotated!.alg).toBe('RS256');
    expect(rotated!.retired).toContain(rsa.kid);
    expect((await keyRing(a).signingKey('RS256')).kid).toBe(rotated!.kid);
    expect((await keyRing(a).signingKey('ES256')).kid).toBe(ec.kid);
    const kids = (await publishedJwks(b)).keys.map((k) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([rsa.kid, rotated!.kid, ec.kid]));

    const refused = await exec(
      'sh',
      ['scripts/node.sh', 'src/cli/admin.ts', 'keys', 'rotate', '--alg', 'HS256', '--json'],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          NODE_ENV: 'test',
          DATABASE_URL: t.url,
          SECRETS_KEY: TEST_SECRETS_KEY,
        },
      },
    ).catch((e: { code: number; stdout: string }) => e);
    expect(refused).toMatchObject({ code: 2 });
    expect(JSON.parse((refused as { stdout: string }).stdout)).toEqual({
      error: { code: 'usage', message: '--alg must be RS256 or ES256 (got "HS256")' },
    });
  });

  it('remembers a verified token only until it expires, and never a forged one', async () => {
    const key = await keyRing(a).signingKey('ES256');
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
    const key = await keyRing(a).signingKey('ES256');
    const jwks = createLocalJWKSet(await publishedJwks(a));
    const halfOrder = P256_ORDER / 2n;
    const sOf = (token: string) =>
      BigInt(`0x${Buffer.from(token.split('.')[2]!, 'base64url').subarray(32).toString('hex')}`);
    // Without normalisation half the signatures are high-S: 200 all low is no accident.
    const tokens = await Promise.all(
      Array.from({ length: 200 }, () => signProxyToken(a, key, subject).then((p) => p.token)),
    );
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
    const forged = await Promise.all(
      Array.from({ length: 200 }, () =>
        signProxyToken(a, { kid: randomBytes(32).toString('base64url'), key: rogue.privateKey }, subject),
      ),
    );
    await verifyProxyToken(a, (await signProxyToken(a, await keyRing(a).signingKey('ES256'), subject)).token); // the keys are loaded
    const keyQueries: string[] = [];
    const onQuery = (q: { sql: string }) => void (q.sql.includes('signing_keys') && keyQueries.push(q.sql));
    a.db.on('query', onQuery);
    try {
      const results = await Promise.all(forged.map((f) => verifyProxyToken(a, f.token)));
      expect(results.every((r) => r === null)).toBe(true);
      expect(keyQueries).toHaveLength(1);

      // Process b rotates right after a's read; a accepts b's first token with the new key.
      const rotated = es256Of(await rotateSigningKeys({ db: b.db, sealer }, ['ES256'], { immediately: true }));
      const fresh = await signProxyToken(b, await keyRing(b).signingKey('ES256'), subject);
      expect(decodeProtectedHeader(fresh.token).kid).toBe(rotated.kid);
      expect(await verifyProxyToken(a, fresh.token)).toMatchObject({ accessTokenId: subject.accessTokenId });
      expect(keyQueries).toHaveLength(2);
    } finally {
      a.db.off('query', onQuery);
    }
  });
});
