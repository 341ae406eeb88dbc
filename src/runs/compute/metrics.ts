// What runs compute: read from this process's compute pools when /metrics is scraped
// (src/ops/metrics.ts merges this registry with its own).
import { Counter, Gauge, Registry } from 'prom-client';
import { computeStats, paceStats } from './budget.ts';

/** The compute pools' gauges and counters, in a registry of their own. */
export function computeMetrics(): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'workflow_compute_calls',
    help: "Computations (template renderings) in this process's compute pool: waiting for a compute process, or running",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = computeStats();
      this.set({ state: 'waiting' }, stats.waiting);
      this.set({ state: 'running' }, stats.running);
    },
  });

  new Counter({
    name: 'workflow_compute_limits_total',
    help: 'Computations failed by a budget: time (COMPUTE_TIME_LIMIT_MS), memory (COMPUTE_HEAP_MB), too_large (NODE_TEXT_MAX_CHARS), run_time (RUN_COMPUTE_MAX_MS)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, n] of Object.entries(computeStats().limits)) this.inc({ kind }, n);
    },
  });

  new Counter({
    name: 'workflow_steps_paced_total',
    help: "Node executions that waited for their user's turn (USER_STEPS_PER_SECOND) in this process",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(paceStats().paced);
    },
  });
  return registry;
}
