import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';
import { joinScopes } from './scopes.ts';

// The grants (authorizations) users give applications: their rows, the standing grant, and their
// revocation with every token issued under them. Times are epoch milliseconds (BIGINT).

/** A grant row per consent (the schema's choice); revocation covers every row of the user-app pair. */
export async function insertAuthorization(
  db: Knex,
  userId: number,
  applicationId: number,
  scope: string,
  now: number,
): Promise<number> {
  return insertReturningId(db, 'authorizations', {
    user_id: userId,
    application_id: applicationId,
    scope,
    created_at: now,
  });
}

/**
 * The user's standing grant to the application: the latest authorization not revoked, with the
 * scopes of all of them (a user who allowed `user_info` and later `api_key` granted both).
 */
export async function findStandingGrant(
  db: Knex,
  userId: number,
  applicationId: number,
): Promise<{ authorizationId: number; scopes: Set<string> } | null> {
  const rows = await db('authorizations')
    .where({ user_id: userId, application_id: applicationId })
    .whereNull('revoked_at')
    .orderBy('id', 'desc')
    .select('id', 'scope');
  if (!rows.length) return null;
  return {
    authorizationId: Number(rows[0].id),
    scopes: new Set(rows.flatMap((r) => String(r.scope).split(' ').filter(Boolean))),
  };
}

/** Revokes the grant and, at once, every token issued under it. */
export async function revokeAuthorization(db: Knex, authorizationId: number, now: number): Promise<void> {
  await db('authorizations').where({ id: authorizationId }).whereNull('revoked_at').update({ revoked_at: now });
  await db('oauth_tokens')
    .where({ authorization_id: authorizationId })
    .whereNull('revoked_at')
    .update({ revoked_at: now, sealed_pair: null, sealed_until: null });
}

/** Revokes every grant of the user to the application, and at once all their tokens. */
export async function revokeApplicationForUser(
  db: Knex,
  userId: number,
  applicationId: number,
  now: number,
): Promise<boolean> {
  return db.transaction(async (trx) => {
    const ids = (
      await trx('authorizations')
        .where({ user_id: userId, application_id: applicationId })
        .whereNull('revoked_at')
        .pluck('id')
    ).map(Number);
    if (ids.length > 0) {
      await trx('authorizations').whereIn('id', ids).update({ revoked_at: now });
      await trx('oauth_tokens')
        .whereIn('authorization_id', ids)
        .whereNull('revoked_at')
        .update({ revoked_at: now, sealed_pair: null, sealed_until: null });
    }
    const withoutAuthorization = await revokeTokensWithoutAuthorization(trx, userId, applicationId, now);
    return ids.length > 0 || withoutAuthorization > 0;
  });
}

/**
 * Revokes the tokens the user holds of the application from grants that do not descend from a code
 * (stored without an authorization, migration 0026): the number revoked. Such a grant has no chain
 * of its own (code_id), so a reuse of one of its refresh tokens revokes all of them.
 */
export async function revokeTokensWithoutAuthorization(
  db: Knex,
  userId: number,
  applicationId: number,
  now: number,
): Promise<number> {
  return db('oauth_tokens')
    .where({ application_id: applicationId, user_id: userId })
    .whereNull('authorization_id')
    .whereNull('revoked_at')
    .update({ revoked_at: now, sealed_pair: null, sealed_until: null });
}

export interface AuthorizedApp {
  applicationId: number;
  name: string;
  homepage: string;
  scope: string;
  /** When the user last granted it. */
  authorizedAt: number;
  /** Its client_id, so that two applications of the same name can be told apart. */
  clientId: string;
  /** `console`, or `dynamic` for a client that registered itself (nobody reviewed it). */
  registrationKind: string;
}

/** The applications the user has authorized (and not revoked), one entry per application. */
export async function listAuthorizedApps(db: Knex, userId: number): Promise<AuthorizedApp[]> {
  const rows = await db('authorizations as z')
    .join('applications as a', 'a.id', 'z.application_id')
    .where('z.user_id', userId)
    .whereNull('z.revoked_at')
    .orderBy('z.created_at', 'desc')
    .select('a.id', 'a.name', 'a.homepage', 'a.client_id', 'a.registration_kind', 'z.scope', 'z.created_at');
  const byApp = new Map<number, AuthorizedApp>();
  for (const r of rows) {
    const id = Number(r.id);
    const seen = byApp.get(id);
    const scopes = new Set([...(seen?.scope.split(' ') ?? []), ...String(r.scope).split(' ')].filter(Boolean));
    byApp.set(id, {
      applicationId: id,
      name: r.name,
      homepage: r.homepage,
      scope: joinScopes([...scopes]),
      authorizedAt: seen?.authorizedAt ?? Number(r.created_at),
      clientId: String(r.client_id),
      registrationKind: String(r.registration_kind),
    });
  }
  return [...byApp.values()];
}

/** How many users hold a grant to the application: an unrevoked authorization, or a token without one (device flow). */
export async function countAuthorizedUsers(db: Knex, applicationId: number): Promise<number> {
  const viaCode = await db('authorizations')
    .where({ application_id: applicationId })
    .whereNull('revoked_at')
    .distinct('user_id');
  const direct = await db('oauth_tokens')
    .where({ application_id: applicationId })
    .whereNull('authorization_id')
    .whereNotNull('user_id')
    .distinct('user_id');
  return new Set([...viaCode, ...direct].map((r: { user_id: number }) => Number(r.user_id))).size;
}

/** When a token was last issued to the application (ms), whether under an authorization or directly; null: never (or all deleted). */
export async function lastTokenIssuedAt(db: Knex, applicationId: number): Promise<number | null> {
  const row = (await db('oauth_tokens as t')
    .leftJoin('authorizations as z', 'z.id', 't.authorization_id')
    .where((q) => q.where('z.application_id', applicationId).orWhere('t.application_id', applicationId))
    .max({ at: 't.created_at' })
    .first()) as { at: number | string | null } | undefined;
  return row?.at == null ? null : Number(row.at);
}
