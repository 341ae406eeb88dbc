// A run started by a webhook sender's delivery (src/hooks): the sender's delivery id is the start's
// Idempotency-Key, so a redelivery answers with the run the first delivery started. Unlike a
// client's repeated Idempotency-Key, a redelivery may differ in what the inputs are read from (a
// new timestamp or signature header), and is still the same delivery: it never gets a 409. The key
// holds for a window only: a delivery id seen again after it starts a new run, which takes the key.
import { Problem } from '../shared/errors.ts';
import { toRun, type Run } from './runShapes.ts';
import { QUEUE_UNAVAILABLE, startRun, type RunContext, type RunInputs, type RunStarts } from './service.ts';
import * as store from './store.ts';

/** A delivery's key (one per trigger and delivery id) and the oldest run it may still name (epoch ms). */
export interface DeliveryKey {
  key: string;
  since: number;
}

export async function startDeliveredRun(
  ctx: RunContext,
  owner: { userId: number; workflowId: string },
  readInputs: () => Promise<RunInputs>,
  delivery: DeliveryKey,
  runStarts: RunStarts,
): Promise<{ run: Run; replayed: boolean }> {
  const { userId, workflowId } = owner;
  const existing = await store.findRunByIdempotencyKey(ctx.db, userId, workflowId, delivery.key);
  if (existing && existing.created_at >= delivery.since) {
    // A first delivery the queue could not take is queued again by the start's own replay.
    if (existing.status === 'failed' && existing.error === QUEUE_UNAVAILABLE)
      return startRun(ctx, userId, workflowId, JSON.parse(existing.inputs) as RunInputs, delivery.key, runStarts);
    return { run: toRun(existing), replayed: true };
  }
  if (existing) await store.releaseIdempotencyKey(ctx.db, existing.id, delivery.key);
  // Read only for a new delivery: a redelivery is answered with its run even when its body no
  // longer fits (the workflow or the trigger's templates changed since).
  const inputs = await readInputs();
  try {
    return await startRun(ctx, userId, workflowId, inputs, delivery.key, runStarts);
  } catch (err) {
    // Two deliveries of one id at once, read into other inputs: the loser answers with the winner's run.
    if (!(err instanceof Problem) || err.code !== 'idempotency_key_reused') throw err;
    const winner = await store.findRunByIdempotencyKey(ctx.db, userId, workflowId, delivery.key);
    if (!winner) throw err;
    return { run: toRun(winner), replayed: true };
  }
}
