// Rules of the workflows domain: graph validation before any write, per-user isolation (another
// user's workflow is simply not found), optimistic concurrency on update, soft delete.
import type { components } from '../../generated/api.d.ts';
import {
  concurrentUpdate,
  invalidIfMatch,
  invalidWorkflow as invalidWorkflowProblem,
  staleVersion,
  workflowNotFound,
  type ProblemItem,
} from '../shared/errors.ts';
import { sortProblems, validateWorkflowGraph, type GraphLimits } from './graph.ts';
import { servedModels } from './models.ts';
import { newWorkflowId } from '../shared/ids.ts';
import type { AppContext } from '../context.ts';
import * as store from './store.ts';
import { referenceProblems } from './references.ts';
import type { WorkflowRow } from './store.ts';
import { insertVersion } from './versions.store.ts';
import { assertStoredBytesWithin, assertWorkflowSlot, pruneVersions } from './quotas.ts';

/**
 * A stored workflow. Its graph passed the typed `WorkflowNode`/`WorkflowEdge` schemas when it was
 * saved, so the service reads it typed; clients read it through the open `WorkflowNodeRead`.
 */
export type Workflow = StoredGraph<components['schemas']['Workflow']>;
/** A wire shape whose `nodes` and `edges` are the typed, validated graph the service stored. */
export type StoredGraph<T> = Omit<T, 'nodes' | 'edges'> & {
  nodes: components['schemas']['WorkflowNode'][];
  edges: components['schemas']['WorkflowEdge'][];
};
export type WorkflowCreate = components['schemas']['WorkflowCreate'];
export type WorkflowUpdate = components['schemas']['WorkflowUpdate'];
export type PageMeta = components['schemas']['PageMeta'];

/** What the workflow services read: the store, the graph limits and retention in config, the clock. */
export type WorkflowContext = Pick<AppContext, 'db' | 'config' | 'now'>;

/**
 * The models a graph may name: fixed unless an OpenAI-compatible provider serves every model (`*`,
 * or no list). Built in: `echo`, and the demo models when DEMO_MODELS is on.
 */
export function graphLimits(config: WorkflowContext['config']): GraphLimits {
  const served = servedModels(config);
  const models = served.accepts_other_models ? undefined : served.data.map((m) => m.id);
  return {
    maxTokens: config.WORKFLOW_MAX_TOKENS_LIMIT,
    maxNodes: config.WORKFLOW_MAX_NODES,
    maxItems: config.RUN_MAX_ITEMS,
    models,
  };
}

/**
 * Lower-cases each character on its own, so `name_lower` has exactly as many characters as
 * `name` (a whole-string toLowerCase can grow, e.g. "İ" -> "i̇", and overflow the column).
 */
export function foldCase(text: string): string {
  let out = '';
  for (const ch of text) {
    const lower = ch.toLowerCase();
    out += [...lower].length === 1 ? lower : ch;
  }
  return out;
}

/** The wire shape of a stored workflow (openapi.yaml Workflow). */
export function toWorkflow(row: WorkflowRow): Workflow {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    nodes: JSON.parse(row.nodes) as Workflow['nodes'],
    edges: JSON.parse(row.edges) as Workflow['edges'],
    version: row.version,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    mcp_tool: row.mcp_tool,
  };
}

/** The immutable version a workflow write stores (versions.store.ts), as the workflow is after it. */
function versionOf(row: store.NewWorkflowRow, restoredFrom: number | null) {
  const { id, name, name_lower, description, nodes, edges, version, updated_at } = row;
  return {
    workflow_id: id,
    version,
    name,
    name_lower,
    description,
    nodes,
    edges,
    restored_from: restoredFrom,
    created_at: updated_at,
  };
}

/** A strong ETag for a version (RFC 9110 8.8.3). */
export const etagOf = (version: number) => `"${version}"`;

/** The one 422 that lists every problem of a workflow, in the order a reader scans the body. */
export function invalidWorkflow(problems: ProblemItem[]) {
  return invalidWorkflowProblem(sortProblems(problems));
}

/** Throws the one 422 that lists every problem of the graph, if it has any. */
export function assertValidGraph(nodes: unknown, edges: unknown, limits: GraphLimits): void {
  const problems = validateWorkflowGraph(nodes, edges, limits);
  if (problems.length > 0) throw invalidWorkflow(problems);
}

/**
 * Throws the one 422 that lists every problem of the graph: its own, and its calls of other
 * workflows (the user's own, no cycle back to `selfId`: references.ts).
 */
export async function assertValidWorkflowGraph(
  ctx: WorkflowContext,
  userId: number,
  selfId: string | undefined,
  nodes: unknown,
  edges: unknown,
): Promise<void> {
  const problems = [
    ...validateWorkflowGraph(nodes, edges, graphLimits(ctx.config)),
    ...(await referenceProblems(ctx.db, userId, selfId, nodes)),
  ];
  if (problems.length > 0) throw invalidWorkflow(problems);
}

export async function createWorkflow(ctx: WorkflowContext, userId: number, body: WorkflowCreate): Promise<Workflow> {
  const nodes = body.nodes ?? [];
  const edges = body.edges ?? [];
  await assertValidWorkflowGraph(ctx, userId, undefined, nodes, edges);
  await assertWorkflowSlot(ctx.db, userId, ctx.config.USER_MAX_WORKFLOWS);
  const now = ctx.now();
  const row: store.NewWorkflowRow = {
    id: newWorkflowId(),
    user_id: userId,
    name: body.name,
    name_lower: foldCase(body.name),
    description: body.description ?? '',
    nodes: JSON.stringify(nodes),
    edges: JSON.stringify(edges),
    version: 1,
    created_at: now,
    updated_at: now,
  };
  // The workflow and its first version, or neither (nor either past the user's bytes).
  await ctx.db.transaction(async (trx) => {
    await store.insertWorkflow(trx, row);
    await insertVersion(trx, versionOf(row, null));
    await assertStoredBytesWithin(trx, userId, ctx.config.USER_MAX_STORED_BYTES);
  });
  return toWorkflow({ ...row, seq: 0, deleted_at: null, mcp_tool: false });
}

export async function getWorkflow(ctx: WorkflowContext, userId: number, id: string): Promise<Workflow> {
  const row = await store.findLiveWorkflow(ctx.db, userId, id);
  if (!row) throw workflowNotFound(id);
  return toWorkflow(row);
}

export interface PageRequest {
  page: number;
  perPage: number;
  search?: string;
}

export async function listWorkflows(
  ctx: WorkflowContext,
  userId: number,
  request: PageRequest,
): Promise<{ data: Workflow[]; meta: PageMeta }> {
  const searchLower = request.search ? foldCase(request.search) : undefined;
  const [total, rows] = await Promise.all([
    store.countLiveWorkflows(ctx.db, userId, searchLower),
    store.listLiveWorkflowsNewestFirst(ctx.db, userId, {
      offset: (request.page - 1) * request.perPage,
      limit: request.perPage,
      searchLower,
    }),
  ]);
  return {
    data: rows.map(toWorkflow),
    meta: { page: request.page, per_page: request.perPage, total, total_pages: Math.ceil(total / request.perPage) },
  };
}

/**
 * The versions an `If-Match` header accepts (RFC 9110 13.1.1): `"3"`, a bare `3`, a list of
 * those, or `*` (null: any version). A malformed header is a 400, not a silent match.
 */
export function parseIfMatch(header: string | undefined): number[] | null | undefined {
  if (header === undefined) return undefined;
  const versions: number[] = [];
  for (const raw of header.split(',')) {
    const tag = raw.trim();
    if (tag === '*') return null;
    // A weak tag never matches: If-Match uses the strong comparison (RFC 9110 13.1.1), so W/"3" is a 412, not a 400.
    if (/^W\/"\d{1,9}"$/.test(tag)) continue;
    const match = /^(?:"(\d{1,9})"|(\d{1,9}))$/.exec(tag);
    if (!match) throw invalidIfMatch(tag);
    versions.push(Number(match[1] ?? match[2]));
  }
  return versions;
}

/**
 * The workflow as it would be after the update, graph validated whole: a change to the nodes
 * alone is checked against the stored edges, and the other way round. Throws 404, 409 (stale
 * `If-Match`) or 422; writes nothing.
 */
export async function prepareUpdate(
  ctx: WorkflowContext,
  userId: number,
  id: string,
  body: WorkflowUpdate,
  ifMatch: string | undefined,
): Promise<{ current: WorkflowRow; changes: store.WorkflowChanges }> {
  const accepted = parseIfMatch(ifMatch);
  const current = await store.findLiveWorkflow(ctx.db, userId, id);
  if (!current) throw workflowNotFound(id);
  if (accepted && !accepted.includes(current.version)) throw staleVersion(current.version, accepted);
  const changes: store.WorkflowChanges = {};
  if (body.name !== undefined) {
    changes.name = body.name;
    changes.name_lower = foldCase(body.name);
  }
  if (body.description !== undefined) changes.description = body.description;
  if (body.mcp_tool !== undefined) changes.mcp_tool = body.mcp_tool;
  if (body.nodes !== undefined || body.edges !== undefined) {
    const nodes: unknown = body.nodes ?? JSON.parse(current.nodes);
    const edges: unknown = body.edges ?? JSON.parse(current.edges);
    await assertValidWorkflowGraph(ctx, userId, id, nodes, edges);
    changes.nodes = JSON.stringify(nodes);
    changes.edges = JSON.stringify(edges);
  }
  return { current, changes };
}

/**
 * Updates a workflow; every successful update bumps `version` (so the ETag changes whenever the
 * representation does). With `If-Match`, a concurrent writer that got there first makes this a 409.
 * Without it, a lost race is retried on the fresh row, so the graph is always validated against
 * what is actually stored. Each update stores the result as an immutable version (`restoredFrom`:
 * the version a restore copied, versions.ts).
 */
export async function updateWorkflow(
  ctx: WorkflowContext,
  userId: number,
  id: string,
  body: WorkflowUpdate,
  ifMatch: string | undefined,
  restoredFrom: number | null = null,
): Promise<Workflow> {
  for (let attempt = 0; ; attempt++) {
    const { current, changes } = await prepareUpdate(ctx, userId, id, body, ifMatch);
    const now = Math.max(ctx.now(), current.updated_at);
    const updated: WorkflowRow = { ...current, ...changes, version: current.version + 1, updated_at: now };
    // The update and its version, or neither: the version row is the workflow as this update left it.
    // Versions past the retention rule go in the same transaction, and the user's bytes are
    // checked after it (quotas.ts): a write that would pass them stores nothing.
    const stored = await ctx.db.transaction(async (trx) => {
      if (!(await store.updateWorkflowAtVersion(trx, userId, id, current.version, { ...changes, updated_at: now })))
        return false;
      await insertVersion(trx, versionOf(updated, restoredFrom));
      await pruneVersions(trx, userId, id, ctx.config.WORKFLOW_MAX_VERSIONS);
      await assertStoredBytesWithin(trx, userId, ctx.config.USER_MAX_STORED_BYTES);
      return true;
    });
    if (stored) return toWorkflow(updated);
    // The row moved between our read and our write (or was deleted: the next read says 404).
    if (ifMatch !== undefined || attempt >= 4) {
      const fresh = await store.findLiveWorkflow(ctx.db, userId, id);
      if (!fresh) throw workflowNotFound(id);
      const accepted = parseIfMatch(ifMatch);
      if (accepted) throw staleVersion(fresh.version, accepted);
      throw concurrentUpdate(fresh.version);
    }
  }
}

/**
 * Deletes a workflow. With `If-Match`, only a version it names: the delete and the version check
 * are one statement, so a save that lands between a client's read and its delete makes it a 412.
 */
export async function deleteWorkflow(
  ctx: WorkflowContext,
  userId: number,
  id: string,
  ifMatch?: string,
): Promise<void> {
  const accepted = parseIfMatch(ifMatch);
  if (await store.softDeleteWorkflow(ctx.db, userId, id, ctx.now(), accepted ?? undefined)) return;
  const current = accepted ? await store.findLiveWorkflow(ctx.db, userId, id) : undefined;
  if (current && accepted) throw staleVersion(current.version, accepted);
  throw workflowNotFound(id);
}

/**
 * For the run endpoints: the user's workflow, live or deleted within the retention period (its
 * runs stay readable in between). 404 once it is gone, which with the default retention of 0 is
 * the moment it is deleted, or when it is not the user's.
 */
export async function findWorkflowForRuns(
  ctx: WorkflowContext,
  userId: number,
  id: string,
): Promise<{ workflow: Workflow; deleted: boolean }> {
  const row = await workflowRowForRuns(ctx, userId, id);
  return { workflow: toWorkflow(row), deleted: row.deleted_at !== null };
}

/** The user's workflows exposed as MCP tools (src/mcp/), oldest first, at most `limit`. */
export async function listMcpTools(ctx: WorkflowContext, userId: number, limit: number): Promise<Workflow[]> {
  return (await store.listLiveMcpTools(ctx.db, userId, limit)).map(toWorkflow);
}

/** findWorkflowForRuns without parsing the graph, for the run endpoints that need only its 404 and whether it is deleted. */
export async function isWorkflowDeletedForRuns(ctx: WorkflowContext, userId: number, id: string): Promise<boolean> {
  return (await workflowRowForRuns(ctx, userId, id)).deleted_at !== null;
}

async function workflowRowForRuns(ctx: WorkflowContext, userId: number, id: string) {
  const row = await store.findWorkflowIncludingDeleted(ctx.db, userId, id);
  if (!row) throw workflowNotFound(id);
  const gone =
    row.deleted_at !== null && row.deleted_at <= ctx.now() - ctx.config.DELETED_WORKFLOW_RETENTION_SECONDS * 1000;
  if (gone) throw workflowNotFound(id);
  return row;
}

/** Hard-deletes workflows soft-deleted more than `retentionMs` ago (and so their runs). Returns how many. */
export async function purgeDeletedWorkflows(ctx: WorkflowContext, retentionMs: number): Promise<number> {
  return store.purgeWorkflowsDeletedBefore(ctx.db, ctx.now() - retentionMs);
}
