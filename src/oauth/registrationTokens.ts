import type { DbContext } from '../context.ts';
import { hashToken, newToken } from '../shared/crypto.ts';
import {
  deleteRegistrationTokenRow,
  insertRegistrationToken,
  listRegistrationTokenRows,
  type RegistrationTokenRow,
} from './registrationTokens.store.ts';

// The operator's initial access tokens (RFC 7591 3; admin CLI `registration-token`): each lets
// anyone holding it register clients while CLIENT_REGISTRATION=initial_access_token, until it
// expires or is revoked. Shown once; stored as a SHA-256 hash.

const PREFIX = 'iat';

export type RegistrationToken = Omit<RegistrationTokenRow, 'token_hash'>;

/** A new initial access token; the plaintext exists only in this answer. */
export async function createRegistrationToken(
  ctx: DbContext,
  input: { label: string; expiresAt: number | null },
): Promise<{ id: number; token: string }> {
  const token = newToken(PREFIX);
  const id = await insertRegistrationToken(ctx.db, {
    token_hash: hashToken(token),
    label: input.label,
    created_at: Date.now(),
    expires_at: input.expiresAt,
  });
  return { id, token };
}

export async function listRegistrationTokens(ctx: DbContext): Promise<RegistrationToken[]> {
  return (await listRegistrationTokenRows(ctx.db)).map(({ token_hash: _hash, ...rest }) => rest);
}

/** Whether a token with this id was revoked (deleted). */
export async function revokeRegistrationToken(ctx: DbContext, id: number): Promise<boolean> {
  return (await deleteRegistrationTokenRow(ctx.db, id)) > 0;
}
