import type { SealerContext } from '../context.ts';
import { isUniqueViolation } from '../db/insert.ts';
import { appSecretContext } from '../db/sealedSecrets.ts';

/**
 * A service secret (session key ...) generated on first start and kept in the database, sealed
 * with the key-encryption key, so every API process shares it and a database read alone does not
 * reveal it. Race-safe: concurrent first starts insert, one wins, all read the winner.
 */
export async function getOrCreateSecret(ctx: SealerContext, name: string, generate: () => string): Promise<string> {
  const existing = await ctx.db('app_secrets').where({ name }).first('value');
  if (existing) return ctx.sealer.open(existing.value as string, appSecretContext(name));
  try {
    await ctx
      .db('app_secrets')
      .insert({ name, value: ctx.sealer.seal(generate(), appSecretContext(name)), created_at: Date.now() });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  const row = await ctx.db('app_secrets').where({ name }).first('value');
  return ctx.sealer.open(row!.value as string, appSecretContext(name));
}
