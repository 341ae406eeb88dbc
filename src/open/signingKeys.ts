import { setTimeout as sleep } from 'node:timers/promises';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Knex } from 'knex';
import type { AppContext, SealerContext } from '../context.ts';
import { signingKeyContext } from '../db/sealedSecrets.ts';
import type { Sealer } from '../shared/sealing.ts';
import {
  anySigningKey,
  findCurrentSigningKey,
  insertSigningKey,
  listVerificationKeys,
  retireSigningKeys,
  type SigningKeyRow,
} from './signingKeys.store.ts';
import { CURRENT_KEY_TTL_MS, KEY_PUBLISHED_AHEAD_MS, publishedSince } from './keyWindows.ts';

export { JWKS_MAX_AGE_SECONDS, KEY_PUBLISHED_AHEAD_MS } from './keyWindows.ts';

// The keys that sign proxy tokens (ES256) and OpenID Connect ID tokens (src/oauth/idToken.ts:
// RS256 by default, ES256 for a client registered with id_token_signed_response_alg: ES256). Each
// algorithm has keys of its own, made, sealed, published and rotated alike. They live in the
// database (every API process signs with the same keys and verifies every other's tokens) and are
// cached here. A private key never leaves this module: not in a log line, not in an error, not in
// CLI output.

/** Proxy tokens are ES256 only: an RSA key never signs one (signProxyToken takes a SigningKey<'ES256'>). */
export const PROXY_TOKEN_ALG = 'ES256';
/** Every algorithm the service signs with; RS256, the ID tokens' default, first (discovery lists them in this order). */
export const SIGNING_ALGS = ['RS256', 'ES256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];
/** RSA keys: 2048-bit moduli (RFC 7518 3.3: 2048 or more). */
export const RSA_MODULUS_BITS = 2048;

export function isSigningAlg(value: string): value is SigningAlg {
  return (SIGNING_ALGS as readonly string[]).includes(value);
}

/**
 * Unknown kids reread the keys at most this often, together: a forged kid costs no query of its
 * own, however many arrive, and waits at most this long for the shared one.
 */
const UNKNOWN_KID_RELOAD_MS = 1_000;

export interface SigningKey<A extends SigningAlg = SigningAlg> {
  kid: string;
  alg: A;
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
  /** The current key of `alg`, created on first use. */
  signingKey<A extends SigningAlg>(alg: A): Promise<SigningKey<A>>;
  /** The public key of a proxy token's `kid`: published ES256 keys only. */
  verificationKey(kid: string): Promise<CryptoKey | undefined>;
  forget(): void;
}

async function newSigningKeyRow(sealer: Sealer, alg: SigningAlg, now: number): Promise<SigningKeyRow> {
  const { privateKey, publicKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'RS256' ? { modulusLength: RSA_MODULUS_BITS } : {}),
  });
  const publicJwk = await exportJWK(publicKey);
  // RFC 7638 thumbprint: unique per key, and anyone can recompute it from the published JWK.
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg };
  const published: PublicJwk = {
    ...publicJwk,
    kty: publicJwk.kty ?? (alg === 'RS256' ? 'RSA' : 'EC'),
    kid,
    alg,
    use: 'sig',
  };
  return {
    kid,
    alg,
    private_jwk: sealer.seal(JSON.stringify(privateJwk), signingKeyContext(kid)),
    public_jwk: JSON.stringify(published),
    created_at: now,
    retired_at: null,
  };
}

async function importPrivate<A extends SigningAlg>(sealer: Sealer, row: SigningKeyRow, alg: A): Promise<SigningKey<A>> {
  if (row.alg !== alg) throw new Error(`signing key ${row.kid} is ${row.alg}, not ${alg}`);
  const jwk = JSON.parse(sealer.open(row.private_jwk, signingKeyContext(row.kid))) as JWK;
  return { kid: row.kid, alg, key: (await importJWK(jwk, alg, { extractable: false })) as CryptoKey };
}

/**
 * Loads the current key of `alg`, creating the first one on first use. Two processes starting at
 * once may both create one: that is safe, because a key is published (and verifies) from the
 * moment it is inserted, before it signs anything, and every process converges on the newest key
 * at its next reload.
 */
async function loadOrCreateCurrent<A extends SigningAlg>(db: Knex, sealer: Sealer, alg: A): Promise<SigningKey<A>> {
  const existing = await findCurrentSigningKey(db, alg, Date.now());
  if (existing) return importPrivate(sealer, existing, alg);
  await insertSigningKey(db, await newSigningKeyRow(sealer, alg, Date.now()));
  const current = await findCurrentSigningKey(db, alg, Date.now());
  if (!current) throw new Error(`no ${alg} signing key after creating one`);
  return importPrivate(sealer, current, alg);
}

function createKeyRing(db: Knex, sealer: Sealer, tokenTtlSeconds: number): KeyRing {
  const current = new Map<SigningAlg, { promise: Promise<SigningKey>; loadedAt: number }>();
  let verifiers = new Map<string, Promise<CryptoKey>>();
  let verifiersLoadedAt = 0;
  let reloading: Promise<void> | undefined;
  let unknownKidReload: Promise<void> | undefined;

  async function readVerifiers(): Promise<void> {
    const rows = await listVerificationKeys(db, publishedSince(Date.now(), tokenTtlSeconds), SIGNING_ALGS);
    const next = new Map<string, Promise<CryptoKey>>();
    // Proxy tokens are all this ring verifies: an RSA key's kid is unknown here.
    for (const row of rows.filter((r) => r.alg === PROXY_TOKEN_ALG)) {
      next.set(
        row.kid,
        verifiers.get(row.kid) ?? (importJWK(JSON.parse(row.public_jwk) as JWK, PROXY_TOKEN_ALG) as Promise<CryptoKey>),
      );
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
    // Never longer than UNKNOWN_KID_RELOAD_MS, even after the clock stepped back.
    unknownKidReload ??= sleep(
      Math.min(UNKNOWN_KID_RELOAD_MS, Math.max(0, verifiersLoadedAt + UNKNOWN_KID_RELOAD_MS - Date.now())),
    )
      .then(reloadVerifiers)
      .finally(() => {
        unknownKidReload = undefined;
      });
    return unknownKidReload;
  }

  return {
    signingKey<A extends SigningAlg>(alg: A): Promise<SigningKey<A>> {
      const now = Date.now();
      let entry = current.get(alg);
      if (!entry || now - entry.loadedAt > CURRENT_KEY_TTL_MS) {
        const promise = loadOrCreateCurrent(db, sealer, alg);
        entry = { promise, loadedAt: now };
        current.set(alg, entry);
        // A failed load (database down) must not be cached.
        promise.catch(() => {
          if (current.get(alg)?.promise === promise) current.delete(alg);
        });
      }
      return entry.promise as Promise<SigningKey<A>>;
    },

    async verificationKey(kid) {
      if (Date.now() - verifiersLoadedAt > CURRENT_KEY_TTL_MS) await reloadVerifiers();
      if (!verifiers.has(kid)) await reloadForUnknownKid();
      return verifiers.get(kid);
    },

    forget() {
      current.clear();
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

/**
 * The JWKS document (RFC 7517 5): current, next and previous public keys of every algorithm. It
 * always holds the key each algorithm signs with: on a fresh store, the first keys are made before
 * the first key set is answered, so no relying party ever caches a key set without them (a key
 * made on first use is published before anyone could have cached a set that lacks it).
 */
export async function publishedJwks(ctx: AppContext): Promise<{ keys: PublicJwk[] }> {
  await Promise.all(SIGNING_ALGS.map((alg) => keyRing(ctx).signingKey(alg)));
  const rows = await listVerificationKeys(ctx.db, publishedSince(Date.now(), longestTokenTtl(ctx)), SIGNING_ALGS);
  return { keys: rows.map((r) => JSON.parse(r.public_jwk) as PublicJwk) };
}

export interface RotatedKey {
  alg: SigningAlg;
  /** The new key: published from the rotation on, signing from `activeFrom`. */
  kid: string;
  /** When the new key starts to sign and the ones it replaces stop (epoch ms). */
  activeFrom: number;
  /** The keys it replaces: they sign until `activeFrom`, then stay published and verifying until their tokens have expired. */
  retired: string[];
}

/**
 * `keys rotate`: for each algorithm of `algs` (every one unless told), a new key, published from
 * the commit on and signing KEY_PUBLISHED_AHEAD_MS later; the keys in use sign until then, then
 * stay published and keep verifying until every token they signed has expired. All in one
 * transaction. `immediately` (a key that leaked): the new keys sign at once, and relying parties
 * that cached the key set refetch it on the new `kid`. Processes switch within CURRENT_KEY_TTL_MS
 * of the switch (this one at once), which the retired keys' retention covers.
 */
export async function rotateSigningKeys(
  ctx: SealerContext,
  algs: readonly SigningAlg[] = SIGNING_ALGS,
  options: { immediately?: boolean } = {},
): Promise<RotatedKey[]> {
  // The keys are made first (an RSA key takes a while): the lead is counted from the transaction.
  const rows = await Promise.all(algs.map((alg) => newSigningKeyRow(ctx.sealer, alg, 0)));
  const rotated = await ctx.db.transaction(async (trx) => {
    const done: RotatedKey[] = [];
    for (const row of rows) {
      const now = Date.now();
      const activeFrom = now + (options.immediately ? 0 : KEY_PUBLISHED_AHEAD_MS);
      const retired = await retireSigningKeys(trx, row.alg, activeFrom);
      // No key of this algorithm yet (a rotation before the first start): none was ever published
      // either (a key set is answered only with its keys made), so this one is the first and signs
      // at once, instead of a process making another, unannounced one on first use.
      const first = retired.length === 0 && !(await anySigningKey(trx, row.alg));
      const from = first ? now : activeFrom;
      await insertSigningKey(trx, { ...row, created_at: from });
      done.push({ alg: row.alg as SigningAlg, kid: row.kid, activeFrom: from, retired });
    }
    return done;
  });
  rings.get(ctx.db)?.forget();
  return rotated;
}
