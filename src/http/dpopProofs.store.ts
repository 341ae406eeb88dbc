// The DPoP proofs already used (RFC 9449 11.1), shared by every process: a proof is recorded by a
// hash of its key's thumbprint and its jti under a unique key, so of two presentations of one proof,
// in whatever processes, exactly one insert succeeds. Rows are kept until the proof's iat would be
// refused anyway, and swept after that.
import type { Knex } from 'knex';
import { isUniqueViolation } from '../db/insert.ts';
import { hashToken } from '../shared/crypto.ts';

/** How many recordings each process makes between sweeps of the rows past their expiry. */
const SWEEP_EVERY = 500;
let sinceSweep = 0;

/** Records a proof as used; false when it was used before (a replay). */
export async function recordProofUse(db: Knex, jkt: string, jti: string, expiresAt: number): Promise<boolean> {
  if (++sinceSweep >= SWEEP_EVERY) {
    sinceSweep = 0;
    // Behind the answer: a failed sweep only leaves rows for the next one.
    void sweepUsedProofs(db, Date.now()).catch(() => undefined);
  }
  try {
    await db('dpop_proofs').insert({ proof_key: hashToken(`${jkt}.${jti}`), expires_at: expiresAt });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/** Deletes the proofs past their expiry: their iat is outside the window, so a replay is refused without them. */
export async function sweepUsedProofs(db: Knex, now: number): Promise<number> {
  return db('dpop_proofs').where('expires_at', '<', now).delete();
}
