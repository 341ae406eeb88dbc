// SQL of workflow versions (migration 0012), named by intent. A version is written once, in the
// transaction of the workflow write that made it, and never changed; it goes when its workflow's
// row is purged (FK cascade). Ownership is the caller's to check first (the workflow's row).
import type { Knex } from 'knex';
import { matching } from './store.ts';

export interface WorkflowVersionRow {
  workflow_id: string;
  version: number;
  name: string;
  name_lower: string;
  description: string;
  /** JSON text of the node array. */
  nodes: string;
  /** JSON text of the edge array. */
  edges: string;
  restored_from: number | null;
  created_at: number;
}

const versionsOf = (db: Knex, workflowId: string) =>
  db<WorkflowVersionRow>('workflow_versions').where({ workflow_id: workflowId });

function fromDb(row: WorkflowVersionRow): WorkflowVersionRow {
  return {
    ...row,
    version: Number(row.version),
    restored_from: row.restored_from === null ? null : Number(row.restored_from),
    created_at: Number(row.created_at),
  };
}

/** The bytes a version stores (migration 0022): its texts as UTF-8, as the stores measure them. */
export const versionBytes = (row: Pick<WorkflowVersionRow, 'name' | 'description' | 'nodes' | 'edges'>) =>
  Buffer.byteLength(row.name) +
  Buffer.byteLength(row.description) +
  Buffer.byteLength(row.nodes) +
  Buffer.byteLength(row.edges);

export async function insertVersion(db: Knex, row: WorkflowVersionRow): Promise<void> {
  await db('workflow_versions').insert({ ...row, bytes: versionBytes(row) });
}

export async function findVersion(
  db: Knex,
  workflowId: string,
  version: number,
): Promise<WorkflowVersionRow | undefined> {
  const row = (await versionsOf(db, workflowId).andWhere({ version }).first()) as WorkflowVersionRow | undefined;
  return row ? fromDb(row) : undefined;
}

export async function countVersions(db: Knex, workflowId: string, searchLower?: string): Promise<number> {
  const result = (await matching(versionsOf(db, workflowId), searchLower).count({ n: '*' }).first()) as
    { n: number | string } | undefined;
  return Number(result?.n ?? 0);
}

/** One page of a workflow's versions, newest (highest number) first. */
export async function listVersionsNewestFirst(
  db: Knex,
  workflowId: string,
  page: { offset: number; limit: number; searchLower?: string },
): Promise<WorkflowVersionRow[]> {
  const rows = (await matching(versionsOf(db, workflowId), page.searchLower)
    .orderBy('version', 'desc')
    .offset(page.offset)
    .limit(page.limit)) as WorkflowVersionRow[];
  return rows.map(fromDb);
}
