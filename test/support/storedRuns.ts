import type { Knex } from 'knex';
import { loadConfig } from '../../src/config.ts';
import { insertReturningId } from '../../src/db/insert.ts';
import { newRunId } from '../../src/runs/service.ts';
import { runsStore } from '../../src/runs/runsStore.ts';
import type { RunStatus } from '../../src/runs/store.ts';
import { createWorkflow } from '../../src/workflows/service.ts';
import { seedGraph } from './seedWorkflow.ts';

/** A user with one workflow, for tests that store runs directly. */
export async function runOwner(db: Knex, workflowName: string): Promise<{ userId: number; workflowId: string }> {
  const userId = await insertReturningId(db, 'users', {
    login: 'alice',
    name: 'alice',
    password_hash: 'x',
    created_at: Date.now(),
  });
  const workflowId = (
    await createWorkflow({ db, config: loadConfig({}), now: Date.now }, userId, { name: workflowName, ...seedGraph() })
  ).id;
  return { userId, workflowId };
}

/** Stores a run of the owner's workflow as a worker would find it: `status`, after `attempts` attempts. Returns its id. */
export async function storedRun(
  db: Knex,
  owner: { userId: number; workflowId: string },
  status: RunStatus,
  attempts: number,
): Promise<string> {
  const id = newRunId();
  const now = Date.now();
  await runsStore(db).start({
    id,
    workflow_id: owner.workflowId,
    user_id: owner.userId,
    status,
    inputs: '{}',
    graph: JSON.stringify({ version: 1, nodes: [], edges: [] }),
    output: null,
    error: null,
    usage: null,
    idempotency_key: null,
    attempts,
    created_at: now,
    started_at: status === 'queued' ? null : now,
    finished_at: null,
    duration_ms: null,
  });
  return id;
}
