import type { Knex } from 'knex';
import { isSealed, type Sealer } from '../shared/sealing.ts';

// The columns that hold the service's own secrets, sealed with the key-encryption key (see
// src/shared/sealing.ts). Each value is bound to its row: the context names table, column and key.

interface SealedColumn {
  table: string;
  column: string;
  key: string;
}

const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'signing_keys', column: 'private_jwk', key: 'kid' },
  { table: 'app_secrets', column: 'value', key: 'name' },
  // Created by a later migration (0014) than the 0003 that seals the others: skipped where absent.
  { table: 'user_secrets', column: 'value', key: 'id' },
];

export function signingKeyContext(kid: string): string {
  return `signing_keys.private_jwk:${kid}`;
}

export function appSecretContext(name: string): string {
  return `app_secrets.value:${name}`;
}

/** A user's named secret, bound to its row: a sealed value copied to another row does not open. */
export function userSecretContext(id: number): string {
  return `user_secrets.value:${id}`;
}

/** The sealed columns whose tables exist (the 0003 migration runs before 0014 creates user_secrets). */
async function presentColumns(db: Knex): Promise<SealedColumn[]> {
  const present: SealedColumn[] = [];
  for (const c of SEALED_COLUMNS) if (await db.schema.hasTable(c.table)) present.push(c);
  return present;
}

function contextOf(c: SealedColumn, id: string): string {
  return `${c.table}.${c.column}:${id}`;
}

export interface ResealReport {
  /** Values sealed (or resealed) with the current key. */
  sealed: number;
  /** Values already sealed with the current key. */
  unchanged: number;
}

/**
 * Seals every plaintext value, and reseals every value sealed with a previous key, with the
 * current key; one transaction, rows locked. What the 0003 migration and `admin secrets reseal` do.
 */
export async function sealAllSecrets(db: Knex, sealer: Sealer): Promise<ResealReport> {
  return db.transaction(async (trx) => {
    const report: ResealReport = { sealed: 0, unchanged: 0 };
    for (const c of await presentColumns(trx)) {
      const rows = (await trx(c.table).forUpdate().select(c.key, c.column)) as Record<string, string>[];
      for (const row of rows) {
        const id = String(row[c.key]);
        const value = row[c.column]!;
        if (sealer.keyIdOf(value) === sealer.currentKeyId) {
          report.unchanged++;
          continue;
        }
        const plaintext = isSealed(value) ? sealer.open(value, contextOf(c, id)) : value;
        await trx(c.table)
          .where(c.key, id)
          .update({ [c.column]: sealer.seal(plaintext, contextOf(c, id)) });
        report.sealed++;
      }
    }
    return report;
  });
}

/** The reverse (rolling back the 0003 migration): every value back to plaintext. */
export async function unsealAllSecrets(db: Knex, sealer: Sealer): Promise<void> {
  for (const c of await presentColumns(db)) {
    const rows = (await db(c.table).select(c.key, c.column)) as Record<string, string>[];
    for (const row of rows) {
      const id = String(row[c.key]);
      const value = row[c.column]!;
      if (isSealed(value))
        await db(c.table)
          .where(c.key, id)
          .update({ [c.column]: sealer.open(value, contextOf(c, id)) });
    }
  }
}

/** Whether any secret is stored in plaintext (a migration without a key must not pass over it). */
export async function hasPlaintextSecrets(db: Knex): Promise<boolean> {
  for (const c of await presentColumns(db)) {
    const values = (await db(c.table).pluck(c.column)) as string[];
    if (values.some((v) => !isSealed(v))) return true;
  }
  return false;
}

export async function hasSealedSecrets(db: Knex): Promise<boolean> {
  for (const c of await presentColumns(db)) {
    const values = (await db(c.table).pluck(c.column)) as string[];
    if (values.some((v) => isSealed(v))) return true;
  }
  return false;
}

/**
 * Opens every sealed secret once, so a process whose SECRETS_KEY did not seal them stops at start
 * with the SealingError that names the key that did, instead of starting and answering the first
 * request that needs one (a login, a proxy token) with a 500. A handful of rows: AES-GCM opens
 * them in microseconds.
 */
export async function assertSecretsOpen(db: Knex, sealer: Sealer): Promise<void> {
  for (const c of await presentColumns(db)) {
    const rows = (await db(c.table).select(c.key, c.column)) as Record<string, string>[];
    for (const row of rows) {
      const value = row[c.column]!;
      if (isSealed(value)) sealer.open(value, contextOf(c, String(row[c.key])));
    }
  }
}
