import type { DbContext } from '../context.ts';
import * as store from './authorizations.store.ts';
import { revocationLease } from '../shared/principalLease.ts';
import type { AuthorizedApp } from './authorizations.store.ts';

// The user's grants to applications, as other domains (the settings pages) see them.

export type { AuthorizedApp };

/** The applications the user has authorized (and not revoked), one entry per application. */
export function listAuthorizedApps(ctx: DbContext, userId: number): Promise<AuthorizedApp[]> {
  return store.listAuthorizedApps(ctx.db, userId);
}

/** Revokes every grant of the user to the application and all their tokens; answers once no process honours them. */
export async function revokeApplication(ctx: DbContext, userId: number, applicationId: number): Promise<boolean> {
  const revoked = await store.revokeApplicationForUser(ctx.db, userId, applicationId, Date.now());
  await revocationLease.settle(); // even when a concurrent call revoked first: it may still be settling
  return revoked;
}

/** How many users hold a grant to the application (the operator's list of registered clients). */
export function countAuthorizedUsers(ctx: DbContext, applicationId: number): Promise<number> {
  return store.countAuthorizedUsers(ctx.db, applicationId);
}

/** When a token was last issued to the application (ms; null: none stored): its "last used", as the tokens tell. */
export function lastTokenIssuedAt(ctx: DbContext, applicationId: number): Promise<number | null> {
  return store.lastTokenIssuedAt(ctx.db, applicationId);
}
