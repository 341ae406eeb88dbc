import type { Knex } from 'knex';

// SQL of the server-side browser sessions (table web_sessions, 0005). Times are epoch milliseconds.

export async function insertWebSession(
  db: Knex,
  row: { id_hash: string; user_id: number; created_at: number; expires_at: number },
): Promise<void> {
  await db('web_sessions').insert(row);
}

/** Whether the session stands: its row exists, belongs to the user and has not expired. */
export async function webSessionStands(db: Knex, idHash: string, userId: number, now: number): Promise<boolean> {
  const row = await db('web_sessions')
    .where({ id_hash: idHash, user_id: userId })
    .andWhere('expires_at', '>', now)
    .first('id_hash');
  return row !== undefined;
}

export async function deleteWebSession(db: Knex, idHash: string): Promise<void> {
  await db('web_sessions').where({ id_hash: idHash }).delete();
}

/** Ends every session of a user (password change); returns how many ended. */
export async function deleteWebSessionsOfUser(db: Knex, userId: number): Promise<number> {
  return db('web_sessions').where({ user_id: userId }).delete();
}

export async function deleteExpiredWebSessionsOfUser(db: Knex, userId: number, now: number): Promise<void> {
  await db('web_sessions').where({ user_id: userId }).andWhere('expires_at', '<=', now).delete();
}

/** A user's sessions that have not expired, newest first. */
export async function listWebSessionsOfUser(
  db: Knex,
  userId: number,
  now: number,
): Promise<{ id_hash: string; created_at: number; expires_at: number }[]> {
  const rows = (await db('web_sessions')
    .where({ user_id: userId })
    .andWhere('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .select('id_hash', 'created_at', 'expires_at')) as {
    id_hash: string;
    created_at: number | string;
    expires_at: number | string;
  }[];
  return rows.map((r) => ({ id_hash: r.id_hash, created_at: Number(r.created_at), expires_at: Number(r.expires_at) }));
}

/** Ends the user's sessions whose id_hash starts with `prefix` (hex); returns how many ended. */
export async function deleteWebSessionsOfUserByPrefix(db: Knex, userId: number, prefix: string): Promise<number> {
  return db('web_sessions').where({ user_id: userId }).andWhere('id_hash', 'like', `${prefix}%`).delete();
}
