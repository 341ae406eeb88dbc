// A run's stored events as JSON pages (openapi.yaml listRunEvents): keyset pages on the events'
// primary key (run_id, seq), so a long run's history is read `limit` events per request.
import type { components } from '../../generated/api.d.ts';
import type { WorkflowContext } from '../workflows/service.ts';
import { listRunEventsAfter } from './events.ts';
import { readableRun } from './service.ts';

type RunEventPage = components['schemas']['RunEventPage'];

/** The stored events after event `after`; 404 as getRun for a run not the user's. */
export async function listRunEvents(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  runId: string,
  page: { after: number; limit: number },
): Promise<RunEventPage> {
  await readableRun(ctx, userId, workflowId, runId);
  // One more than asked tells whether another stored event follows.
  const rows = await listRunEventsAfter(ctx.db, runId, page.after, page.limit + 1);
  const shown = rows.slice(0, page.limit);
  return {
    data: shown.map((e) => ({ id: e.seq, event: e.type, data: JSON.parse(e.data) as Record<string, unknown> })),
    meta: { limit: page.limit, next_after: rows.length > page.limit ? shown.at(-1)!.seq : null },
  };
}
