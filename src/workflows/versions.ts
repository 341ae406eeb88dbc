// Rules of workflow versions (openapi.yaml listWorkflowVersions, getWorkflowVersion,
// restoreWorkflowVersion, runWorkflow's `version`). service.ts writes a version with every create
// and update; this module reads them and restores one. The workflow's row decides who may see
// them (another user's workflow is not found) and how long (a deleted workflow's versions stay
// readable, as its runs do, until the purge).
import type { components } from '../../generated/api.d.ts';
import { invalidField, workflowNotFound, workflowVersionNotFound } from '../shared/errors.ts';
import {
  foldCase,
  isWorkflowDeletedForRuns,
  updateWorkflow,
  type PageMeta,
  type PageRequest,
  type StoredGraph,
  type Workflow,
  type WorkflowContext,
} from './service.ts';
import * as store from './store.ts';
import * as versions from './versions.store.ts';
import type { WorkflowVersionRow } from './versions.store.ts';

export type WorkflowVersion = StoredGraph<components['schemas']['WorkflowVersion']>;

/** The wire shape of a stored version (openapi.yaml WorkflowVersion). */
export function toWorkflowVersion(row: WorkflowVersionRow): WorkflowVersion {
  return {
    workflow_id: row.workflow_id,
    version: row.version,
    name: row.name,
    description: row.description,
    nodes: JSON.parse(row.nodes) as WorkflowVersion['nodes'],
    edges: JSON.parse(row.edges) as WorkflowVersion['edges'],
    restored_from: row.restored_from,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** A version of the user's workflow, live or deleted within retention; 404 otherwise. */
async function readableVersion(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  version: number,
): Promise<WorkflowVersionRow> {
  await isWorkflowDeletedForRuns(ctx, userId, workflowId); // its 404 first: another user's versions are not even "missing"
  const row = await versions.findVersion(ctx.db, workflowId, version);
  if (!row) throw workflowVersionNotFound(workflowId, version);
  return row;
}

export async function getWorkflowVersion(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  version: number,
): Promise<WorkflowVersion> {
  return toWorkflowVersion(await readableVersion(ctx, userId, workflowId, version));
}

/**
 * The graph of the version a request body names (a run's or a schedule's `version`). The workflow
 * in the URL exists, so a version it does not have is the body's fault: 400 `invalid_field` at
 * `/body/version`, as inputs that do not fit the workflow are (a 404 would say the URL is wrong).
 */
export async function versionGraph(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  version: number,
): Promise<{ version: number; nodes: Workflow['nodes']; edges: Workflow['edges'] }> {
  await isWorkflowDeletedForRuns(ctx, userId, workflowId); // its 404 stays a 404
  const row = await versions.findVersion(ctx.db, workflowId, version);
  if (!row)
    throw invalidField(
      `Workflow ${workflowId} has no version ${version}.`,
      '/body/version',
      'is not a version of this workflow (listWorkflowVersions lists them)',
    );
  const { nodes, edges } = toWorkflowVersion(row);
  return { version, nodes, edges };
}

export async function listWorkflowVersions(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  request: PageRequest,
): Promise<{ data: WorkflowVersion[]; meta: PageMeta }> {
  await isWorkflowDeletedForRuns(ctx, userId, workflowId); // its 404
  const searchLower = request.search ? foldCase(request.search) : undefined;
  const [total, rows] = await Promise.all([
    versions.countVersions(ctx.db, workflowId, searchLower),
    versions.listVersionsNewestFirst(ctx.db, workflowId, {
      offset: (request.page - 1) * request.perPage,
      limit: request.perPage,
      searchLower,
    }),
  ]);
  return {
    data: rows.map(toWorkflowVersion),
    meta: { page: request.page, per_page: request.perPage, total, total_pages: Math.ceil(total / request.perPage) },
  };
}

/**
 * Makes a new version of a live workflow from an old one: an update (same validation, same
 * If-Match, same race handling) whose version records where it came from. Nothing is removed, so
 * a restore can be undone by another.
 */
export async function restoreWorkflowVersion(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  version: number,
  ifMatch: string | undefined,
): Promise<Workflow> {
  if (!(await store.findLiveWorkflow(ctx.db, userId, workflowId))) throw workflowNotFound(workflowId);
  const old = await versions.findVersion(ctx.db, workflowId, version);
  if (!old) throw workflowVersionNotFound(workflowId, version);
  const { name, description, nodes, edges } = toWorkflowVersion(old);
  return updateWorkflow(ctx, userId, workflowId, { name, description, nodes, edges }, ifMatch, version);
}

/**
 * The graph a run's `workflow` or `map` node calls: the user's live workflow (another user's, or
 * a deleted one, is not found), at `version` (its immutable record) when given, else as it is now.
 */
export async function calledGraph(
  ctx: Pick<WorkflowContext, 'db'>,
  userId: number,
  workflowId: string,
  version: number | undefined,
): Promise<Pick<Workflow, 'nodes' | 'edges' | 'version'> | undefined> {
  const row = await store.findLiveWorkflow(ctx.db, userId, workflowId);
  const stored = row && version !== undefined ? await versions.findVersion(ctx.db, workflowId, version) : row;
  return stored
    ? {
        nodes: JSON.parse(stored.nodes) as Workflow['nodes'],
        edges: JSON.parse(stored.edges) as Workflow['edges'],
        version: stored.version,
      }
    : undefined;
}
