// How a worker notices another process's cancel of the runs it executes: one status poll for all.
import type { AppContext } from '../context.ts';
import { RunFailure } from '../shared/errors.ts';
import type { Attempt } from './attempt.ts';
import * as store from './store.ts';

/** How often a worker reads the state of the runs it executes, to notice another process's cancel. */
const STATUS_POLL_MS = 1000;

/** The attempts a worker executes, watched for cancels while they run. */
export interface CancelWatch {
  get(runId: string): Attempt | undefined;
  watch(attempt: Attempt): void;
  unwatch(attempt: Attempt): void;
}

/**
 * The attempts this process executes, and one status poll for all of them: a cancel made by
 * another process is seen within a second, for a node waiting on a provider too, at one query a
 * second.
 */
export function watchForCancels(ctx: Pick<AppContext, 'db' | 'logger'>): CancelWatch {
  const executing = new Map<string, Attempt>();
  let poll: NodeJS.Timeout | undefined;
  let polling = false;
  const pollStates = async () => {
    if (polling || !executing.size) return;
    polling = true;
    try {
      const ids = [...executing.keys()];
      const states = await store.runStatesOf(ctx.db, ids);
      const at = performance.now();
      for (const id of ids) {
        const run = executing.get(id);
        if (!run) continue;
        const state = states.get(id);
        if (state?.status === 'running' && state.attempts === run.attempt) run.confirmedAt = at;
        else if (state?.status === 'queued' && state.attempts === run.attempt - 1)
          continue; // held, not claimed yet
        else run.controller.abort(new RunFailure('cancelled', 'The run was cancelled.'));
      }
    } catch (err) {
      ctx.logger.warn({ err }, 'run status poll failed');
    } finally {
      polling = false;
    }
  };
  return {
    get: (runId: string) => executing.get(runId),
    watch(attempt: Attempt) {
      executing.set(attempt.run.id, attempt);
      if (!poll) {
        poll = setInterval(() => void pollStates(), STATUS_POLL_MS);
        poll.unref();
      }
    },
    unwatch(attempt: Attempt) {
      executing.delete(attempt.run.id);
      if (!executing.size) {
        clearInterval(poll);
        poll = undefined;
      }
    },
  };
}
