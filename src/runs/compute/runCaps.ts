// A run's caps on how much it fans out (the run's budgets, docs/workflows/index.md "Run budgets"): node executions
// (RUN_MAX_STEPS, every map item's and called workflow's steps counted) and items taken by its maps
// together (RUN_MAX_ITEMS; a nested map's items are counted in every item of the map around it, so
// nested maps multiply). A run that passes one fails with `too_many_steps` or `too_many_items`:
// the cap's failure aborts `signal`, which the executor joins to the run's own, so every node still
// running stops with it (a map's `on_item_error: skip` does not swallow it). Its stored events are
// capped where they are written (RUN_MAX_EVENTS, eventLog.ts).
import { RunFailure } from '../../shared/errors.ts';

export interface RunCapLimits {
  RUN_MAX_STEPS: number;
  RUN_MAX_ITEMS: number;
  /** Model calls an agent node may make at most (its max_iterations is bounded by this). */
  AGENT_MAX_ITERATIONS_CAP?: number;
}

export class RunCaps {
  private steps = 0;
  private items = 0;
  private readonly stop = new AbortController();
  /** Aborted with the cap's RunFailure once one is passed. */
  readonly signal = this.stop.signal;
  private readonly limits: RunCapLimits;

  constructor(limits: RunCapLimits) {
    this.limits = limits;
  }

  /** A node is about to execute: counted, or the run fails with `too_many_steps`. */
  step(): void {
    this.steps += 1;
    const max = this.limits.RUN_MAX_STEPS;
    if (this.steps > max)
      this.exceed(
        'too_many_steps',
        `The run passed ${max} steps (RUN_MAX_STEPS), its maps' items and called workflows counted: use smaller lists or fewer nodes per item.`,
      );
  }

  /** A map of `nodeId` takes `count` items: counted, or the run fails with `too_many_items` before any of them runs. */
  mapItems(count: number, nodeId: string): void {
    this.items += count;
    const max = this.limits.RUN_MAX_ITEMS;
    if (this.items > max) {
      this.exceed(
        'too_many_items',
        `The map "${nodeId}" takes ${count} items, which brings the run's maps past ${max} items together (RUN_MAX_ITEMS); no item of it ran.`,
      );
    }
  }

  /** The model calls an agent node asking for `requested` may make: the operator's cap bounds it. */
  agentIterations(requested: number): number {
    return Math.min(requested, this.limits.AGENT_MAX_ITERATIONS_CAP ?? requested);
  }

  /** Counted so far (tests, logs). */
  counts(): { steps: number; items: number } {
    return { steps: this.steps, items: this.items };
  }

  private exceed(code: 'too_many_steps' | 'too_many_items', message: string): never {
    if (!this.signal.aborted) this.stop.abort(new RunFailure(code, message));
    throw this.signal.reason as RunFailure;
  }
}
