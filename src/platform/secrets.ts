import type { Knex } from 'knex';
import { isUniqueViolation } from '../db/insert.ts';

/**
 * A service secret (session key ...) generated on first start and kept in the database so every
 * API process shares it. Race-safe: concurrent first starts insert, one wins, all read the winner.
 */
export async function getOrCreateSecret(db: Knex, name: string, generate: () => string): Promise<string> {
  const existing = await db('app_secrets').where({ name }).first('value');
  if (existing) return existing.value as string;
  try {
    await db('app_secrets').insert({ name, value: generate(), created_at: Date.now() });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  const row = await db('app_secrets').where({ name }).first('value');
  return row!.value as string;
}
