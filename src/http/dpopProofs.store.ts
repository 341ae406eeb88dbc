// The DPoP proofs already used (RFC 9449 11.1), shared by every process: a proof is recorded by a
// hash of its key's thumbprint and its jti under a unique key, so of two presentations of one proof,
// in whatever processes, exactly one insert succeeds. Rows are kept until the proof's iat would be
// refused anyway, and swept after that.
import type { Knex } from 'knex';
import { batched } from '../db/batched.ts';
import { isUniqueViolation } from '../db/insert.ts';
import { hashToken } from '../shared/crypto.ts';

/** How many recordings each process makes between sweeps of the rows past their expiry. */
const SWEEP_EVERY = 500;
let sinceSweep = 0;

interface ProofRow {
  proof_key: string;
  expires_at: number;
}

/** Records a proof as used; false when it was used before (a replay), in this process or another. */
export async function recordProofUse(db: Knex, jkt: string, jti: string, expiresAt: number): Promise<boolean> {
  if (++sinceSweep >= SWEEP_EVERY) {
    sinceSweep = 0;
    // Behind the answer: a failed sweep only leaves rows for the next one.
    void sweepUsedProofs(db, Date.now()).catch(() => undefined);
  }
  return recordCoalesced(db, { proof_key: hashToken(`${jkt}.${jti}`), expires_at: expiresAt });
}

/**
 * Concurrent recordings share one insert, which commits once (a proof on every resource request
 * would otherwise cost a commit each). A replay fails the whole statement (a unique key taken, no
 * row stored on either dialect): then each goes again alone, and the replay alone is refused. The
 * same proof twice in one batch: the first is recorded, the second is the replay.
 */
const recordCoalesced = batched(
  async (db: Knex, rows: ProofRow[]): Promise<boolean[]> => {
    const seen = new Set<string>();
    const firsts = rows.map((r) => !seen.has(r.proof_key) && Boolean(seen.add(r.proof_key)));
    try {
      await db('dpop_proofs').insert(rows.filter((_, i) => firsts[i]));
      return firsts;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const answers: boolean[] = [];
    for (const [i, row] of rows.entries()) answers.push(firsts[i]! && (await insertOne(db, row)));
    return answers;
  },
  { max: 64, parallel: 2 },
);

async function insertOne(db: Knex, row: ProofRow): Promise<boolean> {
  try {
    await db('dpop_proofs').insert(row);
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
