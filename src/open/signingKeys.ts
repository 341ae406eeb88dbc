import { setTimeout as sleep } from 'node:timers/promises';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Knex } from 'knex';
import type { AppContext, SealerContext } from '../context.ts';
import { signingKeyContext } from '../db/sealedSecrets.ts';
import type { Sealer } from '../shared/sealing.ts';
import { findCurrentSigningKey, insertSigningKey, listVerificationKeys, retireSigningKeys, type SigningKeyRow } from './signingKeys.store.ts';

// ES256 keys that sign proxy tokens and OpenID Connect ID tokens (src/oauth/idToken.ts). They live in the database (every API process signs with the
// same keys and verifies every other's tokens) and are cached here. A private key never leaves
// this module: not in a log line, not in an error, not in CLI output.

export const PROXY_TOKEN_ALG = 'ES256';

/** How long a process keeps signing with the key it loaded; a rotation elsewhere reaches it within this time. */
const CURRENT_KEY_TTL_MS = 60_000;
/** Clock skew allowance between processes when deciding which retired keys are still needed. */
const SKEW_MS = 60_000;
/**
 * Unknown kids reread the keys at most this often, together: a forged kid costs no query of its
 * own, however many arrive, and waits at most this long for the shared one.
 */
const UNKNOWN_KID_RELOAD_MS = 1_000;

export interface SigningKey {
  kid: string;
  /** A non-extractable CryptoKey: the form jose signs with at the least cost (proxyTokens.ts). */
  key: CryptoKey;
}

export interface PublicJwk extends JWK {
  kty: string;
  kid: string;
  alg: string;
  use: 'sig';
}

interface KeyRing {
  signingKey(): Promise<SigningKey>;
  verificationKey(kid: string): Promise<CryptoKey | undefined>;
  forget(): void;
}

/** How long a retired key stays published: the longest a token it signed can live, plus the cache and skew margins. */
function retentionMs(tokenTtlSeconds: number): number {
  return tokenTtlSeconds * 1000 + CURRENT_KEY_TTL_MS + SKEW_MS;
}

async function newSigningKeyRow(sealer: Sealer, now: number): Promise<SigningKeyRow> {
  const { privateKey, publicKey } = await generateKeyPair(PROXY_TOKEN_ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  // RFC 7638 thumbprint: unique per key, and anyone can recompute it from the published JWK.
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: PROXY_TOKEN_ALG };
  const published: PublicJwk = { ...publicJwk, kty: publicJwk.kty ?? 'EC', kid, alg: PROXY_TOKEN_ALG, use: 'sig' };
  return { kid, alg: PROXY_TOKEN_ALG, private_jwk: sealer.seal(JSON.stringify(privateJwk), signingKeyContext(kid)), public_jwk: JSON.stringify(published), created_at: now, retired_at: null };
}

async function importPrivate(sealer: Sealer, row: SigningKeyRow): Promise<SigningKey> {
  const jwk = JSON.parse(sealer.open(row.private_jwk, signingKeyContext(row.kid))) as JWK;
  return { kid: row.kid, key: (await importJWK(jwk, PROXY_TOKEN_ALG, { extractable: false })) as CryptoKey };
}

/**
 * Loads the current key, creating the first one on first use. Two processes starting at once may
 * both create one: that is safe, because a key is published (and verifies) from the moment it is
 * inserted, and every process converges on the newest key at its next reload.
 */
async function loadOrCreateCurrent(db: Knex, sealer: Sealer): Promise<SigningKey> {
  const existing = await findCurrentSigningKey(db);
  if (existing) return importPrivate(sealer, existing);
  await insertSigningKey(db, await newSigningKeyRow(sealer, Date.now()));
  const current = await findCurrentSigningKey(db);
  if (!current) throw new Error('no signing key after creating one');
  return importPrivate(sealer, current);
}

function createKeyRing(db: Knex, sealer: Sealer, tokenTtlSeconds: number): KeyRing {
  let current: { promise: Promise<SigningKey>; loadedAt: number } | undefined;
  let verifiers = new Map<string, Promise<CryptoKey>>();
  let verifiersLoadedAt = 0;
  let reloading: Promise<void> | undefined;
  let unknownKidReload: Promise<void> | undefined;

  async function readVerifiers(): Promise<void> {
    const rows = await listVerificationKeys(db, Date.now() - retentionMs(tokenTtlSeconds));
    const next = new Map<string, Promise<CryptoKey>>();
    for (const row of rows) {
      next.set(row.kid, verifiers.get(row.kid) ?? (importJWK(JSON.parse(row.public_jwk) as JWK, PROXY_TOKEN_ALG) as Promise<CryptoKey>));
    }
    verifiers = next;
    verifiersLoadedAt = Date.now();
  }

  /** One read at a time; callers during a read share it. */
  function reloadVerifiers(): Promise<void> {
    reloading ??= readVerifiers().finally(() => {
      reloading = undefined;
    });
    return reloading;
  }

  /**
   * An unknown kid may be a key another process created a moment ago, or a forgery: read again,
   * but no sooner than UNKNOWN_KID_RELOAD_MS after the last read, one read for every unknown kid
   * that arrives until then. A new key's first token waits at most that long for the read that
   * finds it (or, when it joined a read begun just before the key's insert, its retry is accepted).
   */
  function reloadForUnknownKid(): Promise<void> {
    unknownKidReload ??= sleep(Math.max(0, verifiersLoadedAt + UNKNOWN_KID_RELOAD_MS - Date.now()))
      .then(reloadVerifiers)
      .finally(() => {
        unknownKidReload = undefined;
      });
    return unknownKidReload;
  }

  return {
    signingKey() {
      const now = Date.now();
      if (!current || now - current.loadedAt > CURRENT_KEY_TTL_MS) {
        const promise = loadOrCreateCurrent(db, sealer);
        current = { promise, loadedAt: now };
        // A failed load (database down) must not be cached.
        promise.catch(() => {
          if (current?.promise === promise) current = undefined;
        });
      }
      return current.promise;
    },

    async verificationKey(kid) {
      if (Date.now() - verifiersLoadedAt > CURRENT_KEY_TTL_MS) await reloadVerifiers();
      if (!verifiers.has(kid)) await reloadForUnknownKid();
      return verifiers.get(kid);
    },

    forget() {
      current = undefined;
      verifiers = new Map();
      verifiersLoadedAt = 0;
    },
  };
}

/** The longest a token these keys sign lives: a retired key stays published until every one has expired. */
function longestTokenTtl(ctx: AppContext): number {
  return Math.max(ctx.config.PROXY_TOKEN_TTL_SECONDS, ctx.config.ID_TOKEN_TTL_SECONDS);
}

// One ring per database: tests run several servers, each on its own database, in one process.
const rings = new WeakMap<Knex, KeyRing>();

export function keyRing(ctx: AppContext): KeyRing {
  let ring = rings.get(ctx.db);
  if (!ring) {
    ring = createKeyRing(ctx.db, ctx.sealer, longestTokenTtl(ctx));
    rings.set(ctx.db, ring);
  }
  return ring;
}

/** The JWKS document (RFC 7517 5): current and previous public keys. */
export async function publishedJwks(ctx: AppContext): Promise<{ keys: PublicJwk[] }> {
  const rows = await listVerificationKeys(ctx.db, Date.now() - retentionMs(longestTokenTtl(ctx)));
  return { keys: rows.map((r) => JSON.parse(r.public_jwk) as PublicJwk) };
}

/**
 * `keys rotate`: retires the keys in use (they keep verifying, and stay published, until every
 * token they signed has expired) and creates the new current key, in one transaction. This
 * process switches at once; other processes within CURRENT_KEY_TTL_MS.
 */
export async function rotateSigningKey(ctx: SealerContext): Promise<{ kid: string; retired: string[] }> {
  const row = await newSigningKeyRow(ctx.sealer, Date.now());
  const retired = await ctx.db.transaction(async (trx) => {
    const kids = await retireSigningKeys(trx, row.created_at);
    await insertSigningKey(trx, row);
    return kids;
  });
  rings.get(ctx.db)?.forget();
  return { kid: row.kid, retired };
}
