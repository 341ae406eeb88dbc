import type { Knex } from 'knex';
import { isUniqueViolation } from '../db/insert.ts';
import { retryConflicts } from '../db/transient.ts';
import { answerOf, batched, batchedReads, togetherElseAlone, type Outcome } from '../db/batched.ts';
import { dialectOf } from '../db/knex.ts';
import { prepared, type PreparedQuery } from '../db/prepared.ts';

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
}

// The token endpoint's statements are prepared (src/db/prepared.ts): a refresh is two of them, a code exchange three, and
// building each with knex per request was a tenth of the refresh grant's CPU (docs/benchmarks.md).

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
    .map((r) => ({ id: Number(r.secret_id), secret_hash: String(r.secret_hash), last_used_at: r.secret_last_used_at === null ? null : Number(r.secret_last_used_at) }));
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
    clientId: String(row.client_id), idTokenAlg: String(row.id_token_signed_response_alg),
    redirectUri: String(row.redirect_uri),
    scope: String(row.scope),
    codeChallenge: row.code_challenge === null ? null : String(row.code_challenge),
    codeChallengeMethod: row.code_challenge_method === null ? null : String(row.code_challenge_method),
    nonce: row.nonce === null ? null : String(row.nonce),
    authTime: row.auth_time === null ? null : Number(row.auth_time),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
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
      'c.id', 'c.authorization_id', 'z.user_id', 'a.client_id', 'a.id_token_signed_response_alg', 'c.redirect_uri', 'c.scope',
      'c.code_challenge', 'c.code_challenge_method', 'c.nonce', 'c.auth_time', 'c.expires_at', 'c.used_at',
      ...SECRET_COLUMNS,
    ),
);

/** Consumes the code; false when another request consumed it first. */
export async function markCodeUsed(db: Knex, codeId: number, now: number): Promise<boolean> {
  return (await codeUsed.run(db, { codeId, now })) === 1;
}

const codeUsed = prepared<{ codeId: number; now: number }>('oauth_code_used', (db, param) =>
  db('oauth_codes').where('id', param('codeId')).whereNull('used_at').update({ used_at: param('now') }),
);

export interface TokenRow {
  id: number;
  authorizationId: number;
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
}

function tokenQuery(db: Knex) {
  return db('oauth_tokens as t')
    .join('authorizations as z', 'z.id', 't.authorization_id')
    .join('applications as a', 'a.id', 'z.application_id')
    .leftJoin('oauth_codes as c', 'c.id', 't.code_id')
    .select(
      't.id',
      't.authorization_id',
      't.code_id',
      'z.user_id',
      'z.application_id',
      'a.client_id', 'a.id_token_signed_response_alg',
      't.scope',
      't.access_scope',
      't.access_expires_at',
      't.refresh_expires_at',
      't.rotated_at',
      't.revoked_at',
      'z.revoked_at as authorization_revoked_at',
      'c.chain_revoked_at',
      'c.auth_time',
    );
}

function toToken(row: Record<string, unknown>): TokenRow {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: Number(row.id),
    authorizationId: Number(row.authorization_id),
    codeId: n(row.code_id),
    userId: Number(row.user_id),
    applicationId: Number(row.application_id),
    clientId: String(row.client_id), idTokenAlg: String(row.id_token_signed_response_alg),
    scope: String(row.scope),
    accessScope: String(row.access_scope ?? row.scope),
    accessExpiresAt: Number(row.access_expires_at),
    refreshExpiresAt: Number(row.refresh_expires_at),
    revokedAt: n(row.revoked_at),
    authorizationRevokedAt: n(row.authorization_revoked_at) ?? n(row.chain_revoked_at),
    authTime: n(row.auth_time),
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
// Batches of refresh reads and of rotations under way at once. One at a time, a rotation batch waited
// for its commit's fsync (innodb_flush_log_at_trx_commit=1) and the next behind it: the refresh
// grant's bottleneck; side by side they share InnoDB's group commit (issue 37, docs/benchmarks.md).
const [REFRESH_READS_UNDER_WAY, ROTATIONS_UNDER_WAY] = [2, 4];

const tokenByRefreshHash = batchedReads(async (db: Knex, hashes: string[]) => {
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
  return new Map([...rowsByHash].map(([hash, tokenRows]) => [hash, { ...toToken(tokenRows[0]!), rotatedAt: rotatedAtOf(tokenRows[0]!), clientSecrets: secretsOf(tokenRows) }]));
}, MAX_HASHES_PER_READ, REFRESH_READS_UNDER_WAY);

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
export async function findTokenWithUserByAccessHash(db: Knex, accessHash: string): Promise<(TokenRow & { user: TokenUser }) | null> {
  const row = await tokenWithUserByAccessHash.first(db, { accessHash });
  if (!row) return null;
  return { ...toToken(row), user: { login: String(row.user_login), name: String(row.user_name), avatarUrl: String(row.user_avatar_url) } };
}

const tokenWithUserByAccessHash = prepared<{ accessHash: string }>('oauth_token_with_user_by_access_hash', (db, param) =>
  tokenQuery(db)
    .join('users as u', 'u.id', 'z.user_id')
    .select('u.login as user_login', 'u.name as user_name', 'u.avatar_url as user_avatar_url')
    .where('t.access_token_hash', param('accessHash'))
    .first(),
);

export interface NewToken {
  authorizationId: number;
  codeId: number | null;
  accessTokenHash: string;
  refreshTokenHash: string;
  scope: string;
  /** Null (or absent) when the access token has the grant's scope. */
  accessScope?: string | null;
  accessExpiresAt: number;
  refreshExpiresAt: number;
  createdAt: number;
  /** A successor's raw pair, sealed for the grace window (chain.store.ts), and until when it is kept. */
  sealedPair?: string | null; sealedUntil?: number | null;
}

export async function insertToken(db: Knex, token: NewToken): Promise<void> {
  const { sealedPair: _none, sealedUntil: _unsealed, ...row } = token; // a deadlock victim goes again (transient.ts):
  await retryConflicts(() => tokenInsert.run(db, { ...row, accessScope: token.accessScope ?? null }));
}

const tokenInsert = prepared<Omit<NewToken, 'sealedPair' | 'sealedUntil'>>('oauth_token_insert', (db, param) =>
  db('oauth_tokens').insert({
    authorization_id: param('authorizationId'),
    code_id: param('codeId'),
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
  return answerOf(await insertSuccessorsCoalesced(db, { ...token, accessScope: token.accessScope ?? null, sealedPair: token.sealedPair ?? null, sealedUntil: token.sealedUntil ?? null, rotatedFromId }));
}

type Successor = NewToken & { accessScope: string | null; sealedPair: string | null; sealedUntil: number | null; rotatedFromId: number };

const MAX_SUCCESSORS_PER_INSERT = 32;

const insertSuccessorsCoalesced = batched(async (db: Knex, successors: Successor[]) => {
  const calls = [];
  for (let i = 0; i < successors.length; i += MAX_SUCCESSORS_PER_INSERT) calls.push(insertSuccessors(db, successors.slice(i, i + MAX_SUCCESSORS_PER_INSERT)));
  return (await Promise.all(calls)).flat();
}, { parallel: ROTATIONS_UNDER_WAY });

/**
 * Stores the successors whose grants stand, in one statement: whether each was stored. When the
 * statement stored nothing (a token rotated meanwhile or presented twice in this batch, a deadlock
 * with a revocation of one of its grants, a row at fault), each goes again alone (of two with one
 * token, the first wins), so only a row at fault fails.
 */
function insertSuccessors(db: Knex, successors: Successor[]): Promise<Outcome<boolean>[]> {
  return togetherElseAlone(successors, async (some) => {
    let stored: number;
    try {
      // A deadlock victim (MariaDB's 1467 on the AUTO-INC lock this holds) goes again (transient.ts).
      const params = Object.fromEntries(some.flatMap((s, i) => SUCCESSOR_FIELDS.map((f) => [`${f}${i}`, s[f]])));
      stored = await retryConflicts(() => successorsInsertStatement(some.length).run(db, params));
    } catch (err) {
      if (some.length === 1 && isUniqueViolation(err)) return [false];
      throw err;
    }
    if (stored === some.length) return some.map(() => true);
    // A grant was revoked meanwhile (its select found no row): the others were stored, so an error
    // here is not the statement's and is not tried again.
    try {
      const storedHashes = new Set((await db('oauth_tokens').whereIn('refresh_token_hash', some.map((s) => s.refreshTokenHash)).pluck('refresh_token_hash')).map(String));
      return some.map((s) => storedHashes.has(s.refreshTokenHash));
    } catch (err) {
      return some.map(() => ({ failed: err }));
    }
  });
}

const SUCCESSOR_FIELDS = ['codeId', 'accessTokenHash', 'refreshTokenHash', 'scope', 'accessScope', 'accessExpiresAt', 'refreshExpiresAt', 'createdAt', 'rotatedFromId', 'sealedPair', 'sealedUntil', 'authorizationId'] as const;

type SuccessorsInsert = PreparedQuery<Record<string, string | number | null>, Record<string, unknown>>;
const successorsInsertStatements = new Map<number, SuccessorsInsert>();

/**
 * INSERT ... SELECT (MySQL and PostgreSQL alike), which the builder cannot write with a column
 * list: one select per successor, each finding its grant's row only while the grant stands.
 * Prepared for each count of rows (1 to 32). PostgreSQL types a UNION's untyped parameters as
 * text, so there the integers say they are bigints.
 */
function successorsInsertStatement(count: number): SuccessorsInsert {
  let query = successorsInsertStatements.get(count);
  if (!query) {
    query = prepared(`oauth_token_successors_insert_${count}`, (db, param) => {
      const pg = dialectOf(db) === 'pg';
      const int = pg ? '?::bigint' : '?';
      // The token rotated must not be revoked (a chain's revocation, chain.store.ts), read under a
      // share lock: a revocation that updates it waits for this insert, and this insert waits for a
      // revocation under way, then sees it revoked.
      const stands = `exists (select 1 from oauth_tokens p where p.id = ${int} and p.revoked_at is null ${pg ? 'for share' : 'lock in share mode'})`;
      const select = `select id, ${int}, ?, ?, ?, ?, ${int}, ${int}, ${int}, ${int}, ?, ${int} from authorizations where id = ? and revoked_at is null and ${stands}`;
      return db.raw(
        `insert into oauth_tokens
           (authorization_id, code_id, access_token_hash, refresh_token_hash, scope, access_scope, access_expires_at, refresh_expires_at, created_at, rotated_from_id, sealed_pair, sealed_until)
         ${Array.from({ length: count }, () => select).join(' union all ')}`,
        Array.from({ length: count }, (_, i) => [...SUCCESSOR_FIELDS.map((f) => param(`${f}${i}`)), param(`rotatedFromId${i}`)]).flat(),
      );
    });
    successorsInsertStatements.set(count, query);
  }
  return query;
}
