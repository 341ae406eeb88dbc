import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config.ts';
import type { AppContext } from '../context.ts';
import { createKnex } from '../db/knex.ts';
import { createLogger } from '../http/logger.ts';
import { signIdToken } from '../oauth/idToken.ts';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createSealer } from '../shared/sealing.ts';
import {
  JWKS_MAX_AGE_SECONDS,
  KEY_PUBLISHED_AHEAD_MS,
  keyRing,
  publishedJwks,
  rotateSigningKeys,
  SIGNING_ALGS,
} from './signingKeys.ts';

// The key set a relying party caches (Cache-Control: max-age=300) always holds every key a token
// it receives before that cache expires can carry: a fresh store answers its first key set with
// the keys that will sign, and a rotated-in key is published ahead of the cache lifetime plus the
// clock skew between processes before any process signs with it.

const sealer = createSealer(Buffer.from(TEST_SECRETS_KEY, 'base64'));
const context = (db: AppContext['db']): AppContext => ({
  config: loadConfig({ NODE_ENV: 'test', BASE_URL: 'http://issuer.test' }),
  db,
  logger: createLogger({ level: 'silent' }),
  sealer,
  now: Date.now,
});
const kidsOf = (jwks: { keys: { kid: string }[] }) => jwks.keys.map((k) => k.kid);
const subject = { userId: 1, clientId: 'app_x', authTime: null, nonce: null, accessToken: 'gho_x' };

describe('GET /.well-known/jwks.json on a fresh instance', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('is never empty: its first answer holds the RS256 and ES256 keys that will sign, cacheable for 300 s', async () => {
    expect(Number((await server.ctx.db('signing_keys').count({ n: '*' }).first())!.n)).toBe(0); // nothing signed yet
    const res = await fetch(`${server.baseUrl}/.well-known/jwks.json`);
    expect(res.headers.get('cache-control')).toBe(`public, max-age=${JWKS_MAX_AGE_SECONDS}`);
    const jwks = (await res.json()) as { keys: { kid: string; alg: string }[] };
    expect(jwks.keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256']);
    for (const alg of SIGNING_ALGS) {
      const token = await signIdToken(server.ctx, { ...subject, alg });
      expect(kidsOf(jwks)).toContain(decodeProtectedHeader(token).kid);
    }
  });
});

describe.each(testDialects())('signing key publication on %s', (dialect) => {
  let t: TestDb;
  let a: AppContext;
  let b: AppContext;
  beforeAll(async () => {
    t = await createTestDb(dialect);
    a = context(t.db);
    b = context(createKnex(t.url, { poolMax: 2 }));
  });
  afterAll(async () => {
    vi.useRealTimers();
    await b?.db.destroy();
    await t?.destroy();
  });

  it('a rotation before the first key: the rotated-in keys are the first ones and sign at once; no process makes another', async () => {
    const rotated = await rotateSigningKeys({ db: t.db, sealer }, SIGNING_ALGS);
    for (const r of rotated) {
      expect(r.retired).toEqual([]);
      expect(Math.abs(r.activeFrom - Date.now())).toBeLessThan(60_000);
      expect((await keyRing(b).signingKey(r.alg)).kid).toBe(r.kid);
    }
    expect(kidsOf(await publishedJwks(a)).sort()).toEqual(rotated.map((r) => r.kid).sort());
    expect(Number((await t.db('signing_keys').count({ n: '*' }).first())!.n)).toBe(SIGNING_ALGS.length);
  });

  it('publishes a rotated-in key ahead of the key set cache lifetime plus clock skew: no process, even a minute fast, signs with it before a key set cached just before the rotation has expired', async () => {
    const old = (await keyRing(a).signingKey('ES256')).kid;
    const cachedBefore = await publishedJwks(a); // a relying party's copy, fetched just before the rotation
    const fetchedAt = Date.now();
    const [rotated] = await rotateSigningKeys({ db: t.db, sealer }, ['ES256']);
    expect(KEY_PUBLISHED_AHEAD_MS).toBeGreaterThanOrEqual(JWKS_MAX_AGE_SECONDS * 1000 + 60_000);
    expect(rotated!.activeFrom - fetchedAt).toBeGreaterThanOrEqual(KEY_PUBLISHED_AHEAD_MS);
    expect(kidsOf(cachedBefore)).not.toContain(rotated!.kid);
    // Every key set answered from the rotation on holds the new key.
    expect(kidsOf(await publishedJwks(b))).toEqual(expect.arrayContaining([old, rotated!.kid]));

    // The relying party's copy expires at fetchedAt + max-age. A process whose clock runs a minute
    // fast, at that real moment, still signs with the old key (which that copy holds).
    const cacheExpiry = fetchedAt + JWKS_MAX_AGE_SECONDS * 1000;
    vi.useFakeTimers({ toFake: ['Date'], now: cacheExpiry + 60_000 - 1 });
    keyRing(b).forget();
    expect((await keyRing(b).signingKey('ES256')).kid).toBe(old);
    // From active_from on, the new key signs, and it is in every key set a client may still hold.
    vi.setSystemTime(rotated!.activeFrom + 1);
    keyRing(b).forget();
    const token = await signIdToken(b, { ...subject, alg: 'ES256' });
    expect(decodeProtectedHeader(token).kid).toBe(rotated!.kid);
    expect(kidsOf(await publishedJwks(b))).toContain(rotated!.kid);
    vi.useRealTimers();
    keyRing(a).forget();
    keyRing(b).forget();
  });
});
