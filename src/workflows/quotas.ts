// What one user may keep of workflows (docs/operating.md "Storage quotas"): live workflows
// (USER_MAX_WORKFLOWS), versions kept per workflow (WORKFLOW_MAX_VERSIONS, a retention rule applied
// on each write) and the bytes of the kept versions (USER_MAX_STORED_BYTES). A refusal is a 409
// `quota_exceeded` naming the limit: the user's stored state refuses it, and the same request
// succeeds once they delete something (as too_many_schedules and too_many_secrets).
import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';
import { Problem } from '../shared/errors.ts';
import { containsPattern } from './store.ts';
import { workflowReferences } from './subgraphs.ts';

export const quotaExceeded = (detail: string) => new Problem('quota_exceeded', detail);

export const tooManyWorkflows = (limit: number) =>
  quotaExceeded(
    `You already have ${limit} workflows, the most allowed per user (USER_MAX_WORKFLOWS); delete one you no longer use.`,
  );

export const tooManyStoredBytes = (bytes: number, limit: number) =>
  quotaExceeded(
    `This write would store ${bytes} bytes of workflows and versions, more than the ${limit} allowed per user (USER_MAX_STORED_BYTES); delete workflows you no longer use.`,
  );

/** Throws 409 when the user has `limit` live workflows already. */
export async function assertWorkflowSlot(db: Knex, userId: number, limit: number): Promise<void> {
  const row = (await db('workflows').where({ user_id: userId }).whereNull('deleted_at').count({ n: '*' }).first()) as
    { n: number | string } | undefined;
  if (Number(row?.n ?? 0) >= limit) throw tooManyWorkflows(limit);
}

/**
 * The bytes of the user's kept versions of their live workflows: names, descriptions and graphs as
 * stored (a workflow's own row repeats its newest version, so it is not counted twice). Each
 * version's size was written with it (migration 0022), so no text is read here.
 */
export async function storedBytes(db: Knex, userId: number): Promise<number> {
  // MySQL's optimizer reads each version's row (its texts inline: 0.5 s for 50 MB) unless told to
  // use the index that covers the sum (3 ms); PostgreSQL finds the index-only scan by itself.
  const versions =
    dialectOf(db) === 'mysql' ? 'workflow_versions v force index (workflow_versions_bytes)' : 'workflow_versions v';
  const row = (await db('workflows as w')
    .join(db.raw(versions), 'v.workflow_id', 'w.id')
    .where('w.user_id', userId)
    .whereNull('w.deleted_at')
    .first(db.raw('coalesce(sum(v.bytes), 0) as n'))) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** Throws 409 when the user's stored bytes (as `db`, the write's transaction, sees them) are past `limit`. */
export async function assertStoredBytesWithin(db: Knex, userId: number, limit: number): Promise<void> {
  const bytes = await storedBytes(db, userId);
  if (bytes > limit) throw tooManyStoredBytes(bytes, limit);
}

/**
 * The versions of `workflowId` something pins by number: a schedule's `version`, or a `workflow`
 * node's `version` / a `map` node's `workflow_version` in the current graph of another of the
 * user's live workflows. (Runs copy their graph when they start, so no run pins a version.)
 */
export async function pinnedVersions(db: Knex, userId: number, workflowId: string): Promise<Set<number>> {
  const pinned = new Set<number>();
  // The schedules' table is read by name: the schedules domain builds on this one, not the reverse.
  const schedules = (await db('workflow_schedules')
    .where({ user_id: userId, workflow_id: workflowId })
    .whereNotNull('version')
    .select('version')) as Array<{ version: number | string }>;
  for (const { version } of schedules) pinned.add(Number(version));
  // Only graphs that mention the id can pin it: the LIKE narrows the rows read to those.
  const callers = (await db('workflows')
    .where({ user_id: userId })
    .whereNull('deleted_at')
    .whereNot({ id: workflowId })
    .whereRaw(`nodes like ? escape '!'`, [containsPattern(JSON.stringify(workflowId))])
    .select('nodes')) as Array<{ nodes: string }>;
  for (const { nodes } of callers) {
    for (const reference of workflowReferences(JSON.parse(nodes))) {
      if (reference.workflowId === workflowId && reference.version !== undefined) pinned.add(reference.version);
    }
  }
  return pinned;
}

/**
 * The retention rule of versions, applied in the transaction of each write: the newest `keep`
 * versions of the workflow stay (the current one among them), older ones go unless pinned
 * (pinnedVersions). Returns how many went.
 */
export async function pruneVersions(db: Knex, userId: number, workflowId: string, keep: number): Promise<number> {
  const older = (await db('workflow_versions')
    .where({ workflow_id: workflowId })
    .orderBy('version', 'desc')
    .offset(keep)
    .select('version')) as Array<{ version: number | string }>;
  if (!older.length) return 0;
  const pinned = await pinnedVersions(db, userId, workflowId);
  const doomed = older.map((r) => Number(r.version)).filter((v) => !pinned.has(v));
  if (!doomed.length) return 0;
  return db('workflow_versions').where({ workflow_id: workflowId }).whereIn('version', doomed).delete();
}
