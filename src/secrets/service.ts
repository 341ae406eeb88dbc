// Named per-user secrets: write-only values, sealed at rest with the key-encryption key
// (src/shared/sealing.ts, as the signing keys), that http_request nodes send by name. A value
// leaves this module only through openSecrets, to the node that sends it.
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { userSecretContext } from '../db/sealedSecrets.ts';
import { isWriteConflict } from '../db/insert.ts';
import { secretNotFound, tooManySecrets } from '../shared/errors.ts';
import * as store from './store.ts';

export type Secret = components['schemas']['Secret'];
export type SecretsContext = Pick<AppContext, 'db' | 'sealer' | 'now'>;

/** Secrets one user may have: each run opens the ones its nodes name, so the list stays short. */
export const MAX_SECRETS_PER_USER = 100;

const toSecret = (row: store.SecretMeta): Secret => ({
  name: row.name,
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
});

export async function listSecrets(ctx: SecretsContext, userId: number): Promise<Secret[]> {
  return (await store.listSecretNames(ctx.db, userId)).map(toSecret);
}

/** Creates or replaces the secret; `created` says which. */
export async function putSecret(
  ctx: SecretsContext,
  userId: number,
  name: string,
  value: string,
): Promise<{ secret: Secret; created: boolean }> {
  const put = () =>
    ctx.db.transaction(async (trx) => {
      const now = ctx.now();
      const existing = await store.findSecretForUpdate(trx, userId, name);
      if (existing) {
        await store.setSecretValue(trx, existing.id, ctx.sealer.seal(value, userSecretContext(existing.id)), now);
        return { secret: toSecret({ ...existing, updated_at: now }), created: false };
      }
      if ((await store.countSecrets(trx, userId)) >= MAX_SECRETS_PER_USER) throw tooManySecrets(MAX_SECRETS_PER_USER);
      const id = await store.insertSecret(trx, userId, name, now);
      await store.setSecretValue(trx, id, ctx.sealer.seal(value, userSecretContext(id)), now);
      return { secret: toSecret({ name, created_at: now, updated_at: now }), created: true };
    });
  try {
    return await put();
  } catch (err) {
    // Two first writes of one name at once: the loser finds the winner's row and replaces it.
    if (isWriteConflict(err)) return put();
    throw err;
  }
}

export async function deleteSecret(ctx: SecretsContext, userId: number, name: string): Promise<void> {
  if (!(await store.deleteSecretByName(ctx.db, userId, name))) throw secretNotFound(name);
}

/** The values of these secrets of the user, by name; a name they do not have is absent from the map. */
export async function openSecrets(
  ctx: Pick<AppContext, 'db' | 'sealer'>,
  userId: number,
  names: readonly string[],
): Promise<Map<string, string>> {
  const rows = await store.findSealedSecrets(ctx.db, userId, [...new Set(names)]);
  return new Map(rows.map((r) => [r.name, ctx.sealer.open(r.value, userSecretContext(r.id))]));
}
