// A run's steps a page at a time (openapi.yaml listRunSteps): keyset pages on (run_id, id), so a
// run with a 10,000-item map is read `limit` steps per request, never whole.
import type { components } from '../../generated/api.d.ts';
import type { WorkflowContext } from '../workflows/service.ts';
import { toRunStep } from './runShapes.ts';
import { readableRun } from './service.ts';
import * as store from './store.ts';

type RunStepPage = components['schemas']['RunStepPage'];

/** The steps after `cursor` (a step's number; none: from the first); 404 as getRun for a run not the user's. */
export async function listRunSteps(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  runId: string,
  page: { cursor: number; limit: number },
): Promise<RunStepPage> {
  await readableRun(ctx, userId, workflowId, runId);
  // One more than asked tells whether a next page exists without a count of the whole run.
  const rows = await store.listStepsAfter(ctx.db, runId, page.cursor, page.limit + 1);
  const shown = rows.slice(0, page.limit);
  const more = rows.length > page.limit;
  return {
    data: shown.map(toRunStep),
    meta: { limit: page.limit, next_cursor: more ? String(shown.at(-1)!.id) : null },
  };
}
