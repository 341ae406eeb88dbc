// Why a node failed, as the run's error (executor.ts): its own failure, a budget it broke, a
// provider's answer, or the run's stop (a cancel, the time limit, another node's failure); and why
// a run was given up with no attempt left to end it (attempt.ts, runner.ts's sweep).
import type { components } from '../../generated/api.d.ts';
import { RunFailure, type RunErrorCode } from '../shared/errors.ts';
import { FunctionError } from './compute/functions.ts';
import { ComputeLimitError } from './compute/pool.ts';
import { ModelUnavailableError, ProviderError } from './providers/index.ts';
import type { DeliveryFailure } from './queue.ts';

type WorkflowNode = components['schemas']['WorkflowNode'];

export function toFailure(err: unknown, node: WorkflowNode, signal: AbortSignal): RunFailure {
  const reason: unknown = signal.aborted ? signal.reason : err;
  if (reason instanceof RunFailure) {
    if (reason.nodeId === null) return new RunFailure(reason.code, reason.message, node.id, reason.provider);
    if (reason.nodeId === node.id) return reason;
    return new RunFailure('cancelled', `Stopped because node ${reason.nodeId} failed.`, node.id);
  }
  if (signal.aborted) return new RunFailure('cancelled', 'The run was cancelled.', node.id);
  if (err instanceof ModelUnavailableError) return new RunFailure('model_unavailable', err.message, node.id);
  if (err instanceof FunctionError) return new RunFailure(err.code as RunErrorCode, err.message, node.id);
  if (err instanceof ComputeLimitError) {
    if (err.kind === 'too_large')
      return new RunFailure('output_too_large', `${err.message} (NODE_TEXT_MAX_CHARS)`, node.id);
    return new RunFailure('compute_limit', err.message, node.id);
  }
  if (err instanceof ProviderError) return new RunFailure(err.kind, err.message, node.id, providerAnswer(err));
  return new RunFailure('provider_error', (err as Error).message, node.id);
}

/** The tokens a failed node's error says were spent before it failed (an answer that came, failed attempts that reported theirs). */
export function spentUsage(err: unknown): RunFailure['usage'] {
  if (err instanceof RunFailure || err instanceof ProviderError) return err.usage;
  return undefined;
}

/** What the provider said of its failure, when it answered at all (a timeout has nothing to keep). */
function providerAnswer(err: ProviderError) {
  const { code, type, requestId } = err.details;
  if (err.status === undefined && code == null && type == null && requestId === undefined) return undefined;
  return {
    ...(err.status !== undefined ? { status: err.status } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(type !== undefined ? { type } : {}),
    ...(requestId !== undefined ? { request_id: requestId } : {}),
  };
}

/** The error of a run given up without a live attempt, by the true cause of its last failed delivery. */
export function abandonedRunError(cause: DeliveryFailure, deliveries?: number): string {
  const message =
    cause === 'store_unavailable'
      ? 'The database stayed unreachable through every retry of this run; it was given up.'
      : deliveries
        ? `The worker running this run stopped responding ${deliveries} times; the run was not retried again.`
        : 'The worker running this run stopped and the run was not retried.';
  return JSON.stringify(new RunFailure(cause, message));
}
