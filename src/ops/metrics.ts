// Prometheus metrics (prom-client) at GET /metrics, behind METRICS_TOKEN. What this process
// counts (HTTP requests, token grants, runs it finished) lives in one process-wide registry; what
// the store knows (runs by status, so the queue's depth) and the pool's use are read at scrape time.
import type { Request, RequestHandler, Router } from 'express';
import express from 'express';
import type { Knex } from 'knex';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppContext } from '../context.ts';
import { safeEqual } from '../shared/crypto.ts';
import type { CostNanos } from '../shared/prices.ts';
import { userSpendGauges } from './userSpend.ts';

const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry });

const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by method, route (the path template, "unmatched" for none) and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [processRegistry],
});

const tokenGrants = new Counter({
  name: 'oauth_token_grants_total',
  help: 'Token endpoint requests by grant type and outcome ("granted" or the RFC 6749 error code)',
  labelNames: ['grant_type', 'outcome'] as const,
  registers: [processRegistry],
});

const runsFinished = new Histogram({
  name: 'workflow_run_duration_seconds',
  help: 'Runs this process finished, by final status, and how long each took',
  labelNames: ['status'] as const,
  buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  registers: [processRegistry],
});

/** Counts one answer of the token endpoint, under its grant's label (the grant registry's, src/oauth/grants/registry.ts). */
export function countTokenGrant(grantLabel: string, outcome: string): void {
  tokenGrants.inc({ grant_type: grantLabel, outcome });
}

/** Records a run this process finished (its final status and duration). */
export function observeRunFinished(status: string, durationMs: number): void {
  runsFinished.observe({ status }, durationMs / 1000);
}

const modelTokens = new Counter({
  name: 'workflow_model_tokens_total',
  help: 'Tokens of the model calls of run steps (and node tests) this process made, by model ("other" for a model neither priced, served by the service nor listed in MODEL_PROVIDER_MODELS) and kind: input (not from the cache), cached (input served from the provider\'s cache), output',
  labelNames: ['model', 'kind'] as const,
  registers: [processRegistry],
});

const modelCost = new Counter({
  name: 'workflow_model_cost_total',
  help: 'What those calls cost at the price table (MODEL_PRICES), in units of the currency, by model (as for the tokens) and currency',
  labelNames: ['model', 'currency'] as const,
  registers: [processRegistry],
});

/** Counts a step's model use: its tokens by kind, and its cost when it has one. `model` is a bounded label (ModelRouter.metricsLabel). */
export function countModelUse(
  model: string,
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number },
  cost: CostNanos | null,
): void {
  const cached = Math.min(usage.cached_tokens ?? 0, usage.prompt_tokens);
  modelTokens.inc({ model, kind: 'input' }, usage.prompt_tokens - cached);
  modelTokens.inc({ model, kind: 'cached' }, cached);
  modelTokens.inc({ model, kind: 'output' }, usage.completion_tokens);
  if (cost) modelCost.inc({ model, currency: cost.currency }, (cost.input + cost.output) / 1e9);
}

const scheduleTicks = new Counter({
  name: 'workflow_schedule_ticks_total',
  help: 'Schedule ticks this process handled: started (a run), refused (a quota or the workflow said no), skipped_late (its next tick had come due)',
  labelNames: ['outcome'] as const,
  registers: [processRegistry],
});

/** Counts one schedule tick this process handled. */
export function countScheduleTick(outcome: 'started' | 'refused' | 'skipped_late'): void {
  scheduleTicks.inc({ outcome });
}

/** The route template that served `req` (bounded label values: never the raw path). */
function routeOf(req: Request): string {
  const openapi = (req as { openapi?: { openApiRoute?: string } }).openapi;
  if (openapi?.openApiRoute) return openapi.openApiRoute;
  const route = (req as { route?: { path?: unknown } }).route;
  if (route && typeof route.path === 'string') return `${req.baseUrl}${route.path}`;
  return 'unmatched';
}

/** Times every request; mount first. */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const end = httpDuration.startTimer();
    res.once('finish', () => end({ method: req.method, route: routeOf(req), status_code: res.statusCode }));
    next();
  };
}

interface Pool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/** Gauges read from this app's store and pool when scraped. */
function storeRegistry(db: Knex, now: () => number): Registry {
  const registry = new Registry();
  userSpendGauges(db, now, registry);
  new Gauge({
    name: 'workflow_runs',
    help: 'Stored runs by status (all processes); "queued" is the depth of the run queue',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const rows = (await db('runs').select('status').count({ n: '*' }).groupBy('status')) as Array<{
        status: string;
        n: number | string;
      }>;
      this.reset();
      for (const status of ['queued', 'running', 'completed', 'failed', 'cancelled']) this.set({ status }, 0);
      for (const row of rows) this.set({ status: row.status }, Number(row.n));
    },
  });
  const pool = () => (db.client as { pool?: Pool }).pool;
  new Gauge({
    name: 'db_pool_connections',
    help: "This process's store connection pool: connections in use, idle, and requests waiting for one",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const p = pool();
      this.set({ state: 'used' }, p?.numUsed() ?? 0);
      this.set({ state: 'free' }, p?.numFree() ?? 0);
      this.set({ state: 'pending' }, p?.numPendingAcquires() ?? 0);
    },
  });
  new Gauge({
    name: 'db_pool_max_connections',
    help: "The size limit of this process's store connection pool",
    registers: [registry],
    collect() {
      this.set(pool()?.max ?? 0);
    },
  });
  return registry;
}

/**
 * GET /metrics in the Prometheus text format, for a scraper that sends
 * `Authorization: Bearer $METRICS_TOKEN`. Without METRICS_TOKEN the endpoint does not exist (404):
 * metrics reveal traffic and should not be public by default. `domainRegistries` are read with
 * this process's own (the run machinery's compute pools): the assembly hands them in, so this
 * module imports no domain and every domain can count into it.
 */
export function metricsRouter(ctx: AppContext, domainRegistries: Registry[] = []): Router {
  const router = express.Router();
  const token = ctx.config.METRICS_TOKEN;
  if (!token) return router;
  const store = storeRegistry(ctx.db, ctx.now);
  router.get('/metrics', async (req, res, next) => {
    const given = /^Bearer (.+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!given || !safeEqual(given, token)) {
      res
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="metrics"')
        .type('text/plain')
        .send('Send Authorization: Bearer <METRICS_TOKEN>.\n');
      return;
    }
    try {
      const merged = Registry.merge([processRegistry, store, ...domainRegistries]);
      res
        .set('Cache-Control', 'no-store')
        .type(merged.contentType)
        .send(await merged.metrics());
    } catch (err) {
      next(err);
    }
  });
  return router;
}
