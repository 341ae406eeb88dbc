// SQL of trigger URLs (workflow_triggers, migration 0013), by intent.
import type { Knex } from 'knex';

export interface TriggerRow {
  id: string;
  workflow_id: string;
  user_id: number;
  name: string;
  token_lookup: string;
  token_hash: string;
  created_at: number;
  last_used_at: number | null;
  /** The trigger's input templates as JSON text (migration 0027); null: the body read by default. */
  inputs: string | null;
  /** The scheme of the signature its requests carry, and its secret, sealed; null: none checked. */
  signature_scheme: string | null;
  signature_secret: string | null;
}

/** The sealed signing secret opens only in its own row (sealing.ts binds it to this context). */
export const signatureSecretContext = (triggerId: string) => `workflow_triggers.signature_secret:${triggerId}`;

const COLUMNS = [
  'id',
  'workflow_id',
  'user_id',
  'name',
  'token_lookup',
  'token_hash',
  'created_at',
  'last_used_at',
  'inputs',
  'signature_scheme',
  'signature_secret',
] as const;

const fromDb = (row: TriggerRow): TriggerRow => ({
  ...row,
  user_id: Number(row.user_id),
  created_at: Number(row.created_at),
  last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
});

export async function insertTrigger(db: Knex, row: TriggerRow): Promise<void> {
  await db('workflow_triggers').insert(row);
}

export async function countTriggers(db: Knex, workflowId: string): Promise<number> {
  const row = (await db('workflow_triggers').where({ workflow_id: workflowId }).count({ n: '*' }).first()) as {
    n: number | string;
  };
  return Number(row.n);
}

export async function listTriggersNewestFirst(
  db: Knex,
  workflowId: string,
  page: { offset: number; limit: number },
): Promise<TriggerRow[]> {
  const rows = (await db('workflow_triggers')
    .select(COLUMNS)
    .where({ workflow_id: workflowId })
    .orderBy('seq', 'desc')
    .offset(page.offset)
    .limit(page.limit)) as TriggerRow[];
  return rows.map(fromDb);
}

export async function findTriggerOfWorkflow(db: Knex, workflowId: string, id: string): Promise<TriggerRow | undefined> {
  const row = (await db('workflow_triggers').select(COLUMNS).where({ workflow_id: workflowId, id }).first()) as
    TriggerRow | undefined;
  return row && fromDb(row);
}

/** The trigger whose token starts so, if its workflow stands (a deleted workflow's triggers start nothing). */
export async function findLiveTriggerByLookup(db: Knex, lookup: string): Promise<TriggerRow | undefined> {
  const row = (await db('workflow_triggers as t')
    .join('workflows as w', 'w.id', 't.workflow_id')
    .select(COLUMNS.map((c) => `t.${c}`))
    .where({ 't.token_lookup': lookup })
    .whereNull('w.deleted_at')
    .first()) as TriggerRow | undefined;
  return row && fromDb(row);
}

export async function deleteTrigger(db: Knex, workflowId: string, id: string): Promise<boolean> {
  return (await db('workflow_triggers').where({ workflow_id: workflowId, id }).delete()) > 0;
}

/** Gives the trigger a new token: the old one matches no row from this commit on. */
export async function replaceTriggerToken(
  db: Knex,
  workflowId: string,
  id: string,
  token: { lookup: string; hash: string },
): Promise<boolean> {
  const changed = await db('workflow_triggers')
    .where({ workflow_id: workflowId, id })
    .update({ token_lookup: token.lookup, token_hash: token.hash });
  return changed > 0;
}

/** Changes the trigger's own fields (never its token); false when it is gone. */
export async function updateTrigger(
  db: Knex,
  workflowId: string,
  id: string,
  changes: Partial<Pick<TriggerRow, 'name' | 'inputs' | 'signature_scheme' | 'signature_secret'>>,
): Promise<boolean> {
  const row = () => db('workflow_triggers').where({ workflow_id: workflowId, id });
  if (Object.keys(changes).length > 0 && (await row().update(changes)) > 0) return true;
  // Nothing to change, or nothing changed (a dialect may count changed rows only): is it there?
  return (await row().first('id')) !== undefined;
}

export async function touchTrigger(db: Knex, id: string, now: number): Promise<void> {
  await db('workflow_triggers').where({ id }).update({ last_used_at: now });
}
