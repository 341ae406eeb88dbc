// SQL of the workflows domain, named by intent. Rows are per user and soft-deleted: a deleted
// workflow keeps its row (and so its runs) until it is purged, but no query here returns it.
import type { Knex } from 'knex';
import { batched } from '../db/batched.ts';
import { prepared } from '../db/prepared.ts';

export interface WorkflowRow {
  seq: number;
  id: string;
  user_id: number;
  name: string;
  name_lower: string;
  description: string;
  /** JSON text of the node array. */
  nodes: string;
  /** JSON text of the edge array. */
  edges: string;
  version: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  /** Whether its owner exposes it as a tool of the MCP server (src/mcp/); false when created. */
  mcp_tool: boolean;
}

export type NewWorkflowRow = Omit<WorkflowRow, 'seq' | 'deleted_at' | 'mcp_tool'>;
export type WorkflowChanges = Partial<
  Pick<WorkflowRow, 'name' | 'name_lower' | 'description' | 'nodes' | 'edges' | 'mcp_tool'>
>;

// `!` rather than `\` as the LIKE escape: a backslash would need different quoting in MySQL and
// in PostgreSQL (standard_conforming_strings), `!` is written the same way in both.
const LIKE_ESCAPE = '!';

/** A LIKE pattern matching `text` anywhere, with the wildcards `%` and `_` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[!%_]/g, (c) => LIKE_ESCAPE + c)}%`;
}

const live = (db: Knex, userId: number) =>
  db<WorkflowRow>('workflows').where({ user_id: userId }).whereNull('deleted_at');

/** Rows whose `name_lower` contains `searchLower` (all without it); workflows and their versions alike. */
export function matching(query: Knex.QueryBuilder, searchLower: string | undefined): Knex.QueryBuilder {
  return searchLower
    ? query.whereRaw(`name_lower like ? escape '${LIKE_ESCAPE}'`, [containsPattern(searchLower)])
    : query;
}

function fromDb(row: WorkflowRow): WorkflowRow {
  // mysql2 may hand BIGINT back as a string when it exceeds 2^53; ours never do, but be exact.
  return {
    ...row,
    seq: Number(row.seq),
    user_id: Number(row.user_id),
    version: Number(row.version),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    deleted_at: row.deleted_at === null ? null : Number(row.deleted_at),
    // MySQL's BOOLEAN is a TINYINT: 0 or 1.
    mcp_tool: Boolean(row.mcp_tool),
  };
}

export async function insertWorkflow(db: Knex, row: NewWorkflowRow): Promise<void> {
  await db('workflows').insert(row);
}

export async function findLiveWorkflow(db: Knex, userId: number, id: string): Promise<WorkflowRow | undefined> {
  const row = await live(db, userId).andWhere({ id }).first();
  return row ? fromDb(row) : undefined;
}

export async function countLiveWorkflows(db: Knex, userId: number, searchLower?: string): Promise<number> {
  const result = (await matching(live(db, userId), searchLower).count({ n: '*' }).first()) as
    { n: number | string } | undefined;
  return Number(result?.n ?? 0);
}

/** One page of the user's workflows, newest first (by insertion sequence, which never ties). */
export async function listLiveWorkflowsNewestFirst(
  db: Knex,
  userId: number,
  page: { offset: number; limit: number; searchLower?: string },
): Promise<WorkflowRow[]> {
  const rows = (await matching(live(db, userId), page.searchLower)
    .orderBy('seq', 'desc')
    .offset(page.offset)
    .limit(page.limit)) as WorkflowRow[];
  return rows.map(fromDb);
}

/**
 * Applies changes only if the workflow is still at `expectedVersion`, bumping the version in the
 * same statement: of two concurrent updates from the same version, exactly one matches a row.
 * Returns whether it did.
 */
export async function updateWorkflowAtVersion(
  db: Knex,
  userId: number,
  id: string,
  expectedVersion: number,
  changes: WorkflowChanges & { updated_at: number },
): Promise<boolean> {
  const count = await live(db, userId)
    .andWhere({ id, version: expectedVersion })
    .update({ ...changes, version: expectedVersion + 1 });
  return count === 1;
}

/** The user's live workflows exposed as MCP tools, oldest first (a stable tool order), at most `limit`. */
export async function listLiveMcpTools(db: Knex, userId: number, limit: number): Promise<WorkflowRow[]> {
  const rows = (await live(db, userId)
    .andWhere({ mcp_tool: true })
    .orderBy('seq', 'asc')
    .limit(limit)) as WorkflowRow[];
  return rows.map(fromDb);
}

/** Marks the workflow deleted (only at one of `versions`, when given); false when there was no such live workflow. */
export async function softDeleteWorkflow(
  db: Knex,
  userId: number,
  id: string,
  now: number,
  versions?: number[],
): Promise<boolean> {
  const query = live(db, userId).andWhere({ id });
  if (versions) query.whereIn('version', versions);
  const count = await query.update({ deleted_at: now });
  return count === 1;
}

/**
 * The user's workflow whether or not it was deleted: the runs domain shows the runs of a deleted
 * workflow until it is purged.
 *
 * Every run start reads it, so concurrent reads of one user's workflow share a statement
 * (src/db/batched.ts): under load, one user's clients starting runs of one workflow read it once
 * per round trip instead of once each. A read asked for while one is under way goes out with the
 * next, so it sees every update and delete committed before it was asked for.
 */
export async function findWorkflowIncludingDeleted(
  db: Knex,
  userId: number,
  id: string,
): Promise<WorkflowRow | undefined> {
  const row = await workflowIncludingDeletedShared(db, { userId, id });
  return row ? fromDb(row) : undefined; // a row of its own for each caller
}

const workflowIncludingDeletedShared = batched(
  async (db: Knex, reads: Array<{ userId: number; id: string }>) => {
    const row = (await workflowIncludingDeleted.first(db, reads[0]!)) as WorkflowRow | undefined;
    return reads.map(() => row);
  },
  { keyOf: ({ userId, id }) => `${userId} ${id}` },
);

/** Prepared (src/db/prepared.ts): every run and every run page reads it. */
const workflowIncludingDeleted = prepared<{ userId: number; id: string }>('workflow_including_deleted', (db, param) =>
  db('workflows')
    .where({ user_id: param('userId'), id: param('id') })
    .first(),
);

/** Removes workflows deleted before `cutoff` for good; their runs, run steps and versions go with them (FK cascade). Returns how many. */
export async function purgeWorkflowsDeletedBefore(db: Knex, cutoff: number): Promise<number> {
  return db('workflows').whereNotNull('deleted_at').andWhere('deleted_at', '<', cutoff).delete();
}
