import type { Knex } from 'knex';
import { retryConflicts } from '../db/transient.ts';
import { answerOf, batchedReads } from '../db/batched.ts';
import { prepared, type PreparedQuery } from '../db/prepared.ts';
import { insertSuccessorsCoalesced, insertSuccessorWithoutAuthorization, type NewToken } from './successors.store.ts';

// The OAuth provider's SQL, named by intent. Times are epoch milliseconds (BIGINT).

export interface NewCode {
  codeHash: string;
  authorizationId: number;
  applicationId: number;
  userId: number;
  redirectUri: string;
  scope: string;
  codeChallenge: string | undefined;
  codeChallengeMethod: string | undefined;
  /** OpenID Connect: the request's nonce, and when the user logged in (ms), for the ID token. */
  nonce: string | undefined;
  authTime: number;
  expiresAt: number;
  createdAt: number;
  /** RFC 8707: the resources the request named (space separated), or null. */
  resources: string | null;
}

export async function insertCode(db: Knex, code: NewCode): Promise<void> {
  await db('oauth_codes').insert({
    code_hash: code.codeHash,
    authorization_id: code.authorizationId,
    application_id: code.applicationId,
    user_id: code.userId,
    redirect_uri: code.redirectUri,
    scope: code.scope,
    code_challenge: code.codeChallenge ?? null,
    code_challenge_method: code.codeChallengeMethod ?? null,
    nonce: code.nonce ?? null,
    auth_time: code.authTime,
    expires_at: code.expiresAt,
    created_at: code.createdAt,
    resources: code.resources,
  });
}

export interface CodeRow {
  id: number;
  /** The client's, read with the code so that client authentication needs no query of its own. */
  clientSecrets: IssuedToSecret[];
  authorizationId: number;
  userId: number;
  clientId: string;
  idTokenAlg: string; // the client's id_token_signed_response_alg: how its ID tokens are signed
  redirectUri: string;
  scope: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  nonce: string | null;
  /** When the user logged in (ms); null for codes issued before migration 0020. */
  authTime: number | null;
  expiresAt: number;
  usedAt: number | null;
  /** RFC 8707: the resources authorized (space separated); null when the request named none. */
  resources: string | null;
}

// The token endpoint's statements are prepared (src/db/prepared.ts): a refresh is two of them, a code exchange three, and
// building each with knex per request was a tenth of the refresh grant's CPU (docs/benchmarks-history.md).

/** One of the client's secrets, as read with the code or refresh token being exchanged. */
export interface IssuedToSecret {
  id: number;
  secret_hash: string;
  last_used_at: number | null;
}

/** A client's secrets, joined to the code or token being exchanged. */
const SECRET_COLUMNS = ['s.id as secret_id', 's.secret_hash', 's.last_used_at as secret_last_used_at'] as const;

function secretsOf(rows: Array<Record<string, unknown>>): IssuedToSecret[] {
  return rows
    .filter((r) => r.secret_id !== null && r.secret_id !== undefined)
    .map((r) => ({
      id: Number(r.secret_id),
      secret_hash: String(r.secret_hash),
      last_used_at: r.secret_last_used_at === null ? null : Number(r.secret_last_used_at),
    }));
}

/** A code whose authorization still stands (revoking an app also kills its pending codes). */
export async function findCodeByHash(db: Knex, codeHash: string): Promise<CodeRow | null> {
  // One row per client secret (two during a rotation; one with NULLs when the app has none).
  const rows = await codeByHash.rows(db, { codeHash });
  const row = rows[0];
  if (!row) return null;
  return {
    id: Number(row.id),
    clientSecrets: secretsOf(rows),
    authorizationId: Number(row.authorization_id),
    userId: Number(row.user_id),
    clientId: String(row.client_id),
    idTokenAlg: String(row.id_token_signed_response_alg),
    redirectUri: String(row.redirect_uri),
    scope: String(row.scope),
    codeChallenge: row.code_challenge === null ? null : String(row.code_challenge),
    codeChallengeMethod: row.code_challenge_method === null ? null : String(row.code_challenge_method),
    nonce: row.nonce === null ? null : String(row.nonce),
    authTime: row.auth_time === null ? null : Number(row.auth_time),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
    resources: row.resources === null || row.resources === undefined ? null : String(row.resources),
  };
}

const codeByHash = prepared<{ codeHash: string }>('oauth_code_by_hash', (db, param) =>
  db('oauth_codes as c')
    .join('authorizations as z', 'z.id', 'c.authorization_id')
    .join('applications as a', 'a.id', 'z.application_id')
    .leftJoin('client_secrets as s', 's.application_id', 'a.id')
    .where('c.code_hash', param('codeHash'))
    .whereNull('z.revoked_at')
    .select(
      'c.id',
      'c.authorization_id',
      'z.user_id',
      'a.client_id',
      'a.id_token_signed_response_alg',
      'c.redirect_uri',
      'c.scope',
      'c.code_challenge',
      'c.code_challenge_method',
      'c.nonce',
      'c.auth_time',
      'c.expires_at',
      'c.used_at',
      'c.resources',
      ...SECRET_COLUMNS,
    ),
);

/** Consumes the code; false when another request consumed it first. */
export async function markCodeUsed(db: Knex, codeId: number, now: number): Promise<boolean> {
  return (await codeUsed.run(db, { codeId, now })) === 1;
}

const codeUsed = prepared<{ codeId: number; now: number }>('oauth_code_used', (db, param) =>
  db('oauth_codes')
    .where('id', param('codeId'))
    .whereNull('used_at')
    .update({ used_at: param('now') }),
);

export interface TokenRow {
  id: number;
  /** Null for a token of a grant that does not descend from a code: it names its user and client itself (migration 0026). */
  authorizationId: number | null;
  codeId: number | null;
  userId: number;
  applicationId: number;
  clientId: string;
  idTokenAlg: string; // the client's id_token_signed_response_alg: how its ID tokens are signed
  /** The grant's scope, which the refresh token carries on. */
  scope: string;
  /** The access token's: the grant's, or narrower when a refresh asked for less (RFC 6749 6). */
  accessScope: string;
  accessExpiresAt: number;
  refreshExpiresAt: number;
  revokedAt: number | null;
  /** When the grant it stands on was revoked: its authorization, or its chain (chain.store.ts). */
  authorizationRevokedAt: number | null;
  /** When the user logged in for the code it descends from (ms): a refreshed ID token's auth_time (OIDC Core 12.2). */
  authTime: number | null;
  /** When the pair was issued (ms): introspection's `iat`. */
  createdAt: number;
  /** The RFC 7638 thumbprint of the DPoP key the access token is bound to (its `cnf.jkt`); null for a bearer token. */
  dpopJkt: string | null;
  /** RFC 8707: the grant's resources (space separated), which the refresh token carries on; null when none was named. */
  resources: string | null;
  /** RFC 8707: the access token's audience (space separated); null when none was named. */
  audience: string | null;
}

/** A token's user: its authorization's, or its own when it has none (migration 0026). */
const TOKEN_USER_ID = 'coalesce(z.user_id, t.user_id)';

function tokenQuery(db: Knex) {
  return db('oauth_tokens as t')
    .leftJoin('authorizations as z', 'z.id', 't.authorization_id')
    .join('applications as a', function () {
      this.on('a.id', '=', db.raw('coalesce(z.application_id, t.application_id)'));
    })
    .leftJoin('oauth_codes as c', 'c.id', 't.code_id')
    .select(
      't.id',
      't.authorization_id',
      't.code_id',
      db.raw(`${TOKEN_USER_ID} as user_id`),
      'a.id as application_id',
      'a.client_id',
      'a.id_token_signed_response_alg',
      't.scope',
      't.access_scope',
      't.access_expires_at',
      't.refresh_expires_at',
      't.rotated_at',
      't.revoked_at',
      'z.revoked_at as authorization_revoked_at',
      'c.chain_revoked_at',
      'c.auth_time',
      't.created_at',
      't.dpop_jkt',
      't.resources',
      't.audience',
    );
}

function toToken(row: Record<string, unknown>): TokenRow {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: Number(row.id),
    authorizationId: n(row.authorization_id),
    codeId: n(row.code_id),
    userId: Number(row.user_id),
    applicationId: Number(row.application_id),
    clientId: String(row.client_id),
    idTokenAlg: String(row.id_token_signed_response_alg),
    scope: String(row.scope),
    accessScope: String(row.access_scope ?? row.scope),
    accessExpiresAt: Number(row.access_expires_at),
    refreshExpiresAt: Number(row.refresh_expires_at),
    revokedAt: n(row.revoked_at),
    authorizationRevokedAt: n(row.authorization_revoked_at) ?? n(row.chain_revoked_at),
    authTime: n(row.auth_time),
    createdAt: Number(row.created_at),
    dpopJkt: row.dpop_jkt === null || row.dpop_jkt === undefined ? null : String(row.dpop_jkt),
    resources: row.resources === null || row.resources === undefined ? null : String(row.resources),
    audience: row.audience === null || row.audience === undefined ? null : String(row.audience),
  };
}

/**
 * A refresh token with when it was rotated (only this read joins its successor) and its client's
 * secret hash, so that client authentication needs no query of its own.
 */
export type RefreshTokenRow = TokenRow & { rotatedAt: number | null; clientSecrets: IssuedToSecret[] };

/** Rotated when a successor names it (rotated_from_id); rotated_at for tokens rotated before migration 0009. */
function rotatedAtOf(row: Record<string, unknown>): number | null {
  const at = row.rotated_at ?? row.successor_created_at;
  return at === null || at === undefined ? null : Number(at);
}

/** Concurrent refreshes share one read of their tokens (src/db/batched.ts). */
export async function findTokenByRefreshHash(db: Knex, refreshHash: string): Promise<RefreshTokenRow | null> {
  return (await tokenByRefreshHash(db, refreshHash)) ?? null;
}

const MAX_HASHES_PER_READ = 32;
// Batches of refresh reads under way at once (of rotations: successors.store.ts, docs/benchmarks-history.md).
const REFRESH_READS_UNDER_WAY = 2;

const tokenByRefreshHash = batchedReads(
  async (db: Knex, hashes: string[]) => {
    // Prepared for 1, 2, 4 ... 32 hashes (few shapes); the places a read does not need repeat its first hash.
    const size = 2 ** Math.ceil(Math.log2(hashes.length));
    const params = Object.fromEntries(Array.from({ length: size }, (_, i) => [`h${i}`, hashes[i] ?? hashes[0]!]));
    const rows = await tokensByRefreshHashes(size).rows(db, params);
    // One row per client secret of the token's client (two during a rotation; one with NULLs when it has none).
    const rowsByHash = new Map<string, Array<Record<string, unknown>>>();
    for (const row of rows) {
      const hash = String(row.refresh_token_hash);
      const tokenRows = rowsByHash.get(hash);
      if (tokenRows) tokenRows.push(row);
      else rowsByHash.set(hash, [row]);
    }
    return new Map(
      [...rowsByHash].map(([hash, tokenRows]) => [
        hash,
        { ...toToken(tokenRows[0]!), rotatedAt: rotatedAtOf(tokenRows[0]!), clientSecrets: secretsOf(tokenRows) },
      ]),
    );
  },
  MAX_HASHES_PER_READ,
  REFRESH_READS_UNDER_WAY,
);

type HashesRead = PreparedQuery<Record<string, string>, Record<string, unknown>>;
const byRefreshHashes = new Map<number, HashesRead>();

function tokensByRefreshHashes(size: number): HashesRead {
  let query = byRefreshHashes.get(size);
  if (!query) {
    query = prepared<Record<string, string>>(`oauth_tokens_by_refresh_hashes_${size}`, (db, param) =>
      tokenQuery(db)
        .leftJoin('client_secrets as s', 's.application_id', 'a.id')
        .leftJoin('oauth_tokens as successor', 'successor.rotated_from_id', 't.id')
        .select(...SECRET_COLUMNS, 'successor.created_at as successor_created_at', 't.refresh_token_hash')
        .whereIn(
          't.refresh_token_hash',
          Array.from({ length: size }, (_, i) => param(`h${i}`)),
        ),
    );
    byRefreshHashes.set(size, query);
  }
  return query;
}

export async function findTokenByAccessHash(db: Knex, accessHash: string): Promise<TokenRow | null> {
  const row = await tokenQuery(db).where('t.access_token_hash', accessHash).first();
  return row ? toToken(row) : null;
}

export interface TokenUser {
  login: string;
  name: string;
  avatarUrl: string;
}

/**
 * A bearer access token with its user's public profile, in one statement: resource requests
 * (user info above all) then need no second round trip for the user.
 */
export async function findTokenWithUserByAccessHash(
  db: Knex,
  accessHash: string,
): Promise<(TokenRow & { user: TokenUser }) | null> {
  const row = await tokenWithUserByAccessHash.first(db, { accessHash });
  if (!row) return null;
  return {
    ...toToken(row),
    user: { login: String(row.user_login), name: String(row.user_name), avatarUrl: String(row.user_avatar_url) },
  };
}

const tokenWithUserByAccessHash = prepared<{ accessHash: string }>(
  'oauth_token_with_user_by_access_hash',
  (db, param) =>
    tokenQuery(db)
      .join('users as u', function () {
        this.on('u.id', '=', db.raw(TOKEN_USER_ID));
      })
      .select('u.login as user_login', 'u.name as user_name', 'u.avatar_url as user_avatar_url')
      .where('t.access_token_hash', param('accessHash'))
      .first(),
);

export type { NewToken } from './successors.store.ts';

export async function insertToken(db: Knex, token: NewToken): Promise<void> {
  const { sealedPair: _none, sealedUntil: _unsealed, ...row } = token; // a deadlock victim goes again (transient.ts):
  await retryConflicts(() =>
    tokenInsert.run(db, {
      ...row,
      accessScope: token.accessScope ?? null,
      userId: token.userId ?? null,
      applicationId: token.applicationId ?? null,
    }),
  );
}

const tokenInsert = prepared<Omit<NewToken, 'sealedPair' | 'sealedUntil'>>('oauth_token_insert', (db, param) =>
  db('oauth_tokens').insert({
    authorization_id: param('authorizationId'),
    code_id: param('codeId'),
    user_id: param('userId'),
    application_id: param('applicationId'),
    access_token_hash: param('accessTokenHash'),
    refresh_token_hash: param('refreshTokenHash'),
    scope: param('scope'),
    access_scope: param('accessScope'),
    access_expires_at: param('accessExpiresAt'),
    refresh_expires_at: param('refreshExpiresAt'),
    created_at: param('createdAt'),
  }),
);

/**
 * Refresh rotation (RFC 9700 4.14.2) in one statement: stores the new pair as the successor of
 * token `rotatedFromId`, while it and its grant stand. False when either was revoked meanwhile, or when a
 * concurrent refresh rotated the token first (its successor holds the unique rotated_from_id).
 * Concurrent rotations share the statement (src/db/batched.ts); each answers for itself alone,
 * so an error fails only the rotation it belongs to.
 */
export async function insertSuccessorToken(db: Knex, token: NewToken, rotatedFromId: number): Promise<boolean> {
  if (token.authorizationId === null) return insertSuccessorWithoutAuthorization(db, token, rotatedFromId);
  return answerOf(
    await insertSuccessorsCoalesced(db, {
      ...token,
      accessScope: token.accessScope ?? null,
      sealedPair: token.sealedPair ?? null,
      sealedUntil: token.sealedUntil ?? null,
      rotatedFromId,
    }),
  );
}
