import { z } from 'zod';
import { fairnessEnv, fairnessSettings } from './fairnessConfig.ts';
import { priceEnv, priceTableOf } from './priceConfig.ts';
import { parseAllowHosts } from './outbound/allowList.ts';
import { allowHosts, blankToUndefined, booleanText, httpUrl, integer, KEK_HINT, parseKek } from './configValues.ts';
import { hostList, hostNames, urlWithScheme } from './configValues.ts';

/** Every bad environment variable, one line each; thrown by loadConfig. */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

const CLIENT_REGISTRATION_MODES = ['off', 'initial_access_token', 'open'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const NODE_ENVS = ['development', 'production', 'test'] as const;

const envSchema = z.object({
  ...fairnessEnv(integer),
  ...priceEnv(),
  PORT: integer(3000, 1, 65535),
  HOST: z.preprocess(blankToUndefined, z.string().default('0.0.0.0')),
  BASE_URL: z.preprocess(blankToUndefined, httpUrl().optional()),
  DATABASE_URL: z.preprocess(
    blankToUndefined,
    urlWithScheme(['mysql:', 'postgres:', 'postgresql:'], 'mysql://user:pass@host:3306/db').optional(),
  ),
  QUEUE_URL: z.preprocess(
    blankToUndefined,
    urlWithScheme(['postgres:', 'postgresql:'], 'postgres://user:pass@host:5432/db').optional(),
  ),
  DATA_DIR: z.preprocess(blankToUndefined, z.string().default('./.data')),
  EMBEDDED_PG_PORT: integer(5433, 1, 65535),
  NODE_ENV: z.preprocess(
    blankToUndefined,
    z
      .enum(NODE_ENVS, { error: (i) => `must be one of ${NODE_ENVS.join(', ')} (got "${String(i.input)}")` })
      .default('development'),
  ),
  LOG_LEVEL: z.preprocess(
    blankToUndefined,
    z
      .enum(LOG_LEVELS, { error: (i) => `must be one of ${LOG_LEVELS.join(', ')} (got "${String(i.input)}")` })
      .default('info'),
  ),
  TRUST_PROXY: z.preprocess(blankToUndefined, z.string().optional()),
  MODEL_PROVIDER_BASE_URL: z.preprocess(blankToUndefined, httpUrl().optional()),
  MODEL_PROVIDER_API_KEY: z.preprocess(blankToUndefined, z.string().optional()),
  MODEL_PROVIDER_MODELS: z.preprocess(blankToUndefined, z.string().optional()),
  AUTH_CODE_TTL_SECONDS: integer(300, 1, 600),
  ACCESS_TOKEN_TTL_SECONDS: integer(7200, 1, 31_536_000),
  REFRESH_TOKEN_TTL_SECONDS: integer(30 * 24 * 3600, 1, 31_536_000),
  REFRESH_REUSE_GRACE_SECONDS: integer(30, 0, 300),
  PROXY_TOKEN_TTL_SECONDS: integer(1800, 1, 86_400),
  ID_TOKEN_TTL_SECONDS: integer(3600, 1, 86_400),
  PAR_REQUEST_URI_TTL_SECONDS: integer(60, 1, 600),
  WORKFLOW_MAX_TOKENS_LIMIT: integer(32768, 1, 10_000_000),
  BODY_LIMIT_BYTES: integer(1_048_576, 1024, 1_073_741_824),
  RUN_TIMEOUT_SECONDS: integer(300, 1, 86_400),
  RUN_CONCURRENCY: integer(32, 1, 1000),
  SCHEDULE_CHECK_INTERVAL_SECONDS: integer(10, 1, 45),
  COMPUTE_PROCESSES: integer(0, 0, 256),
  COMPUTE_HEAP_MB: integer(64, 16, 16_384),
  COMPUTE_TIME_LIMIT_MS: integer(5_000, 10, 600_000),
  COMPUTE_USER_MAX_PROCESSES: integer(0, 0, 256),
  RUN_COMPUTE_MAX_MS: integer(60_000, 10, 86_400_000),
  NODE_TEXT_MAX_CHARS: integer(1_000_000, 1_000, 100_000_000),
  RUN_TEXT_MAX_CHARS: integer(4_000_000, 1_000, 1_000_000_000),
  RUN_OUTPUT_MAX_CHARS: integer(2_000_000, 1_000, 100_000_000),
  RUN_MAX_STEPS: integer(25_600, 10, 10_000_000),
  RUN_MAX_ITEMS: integer(20_000, 1, 10_000_000),
  RUN_MAX_EVENTS: integer(51_200, 100, 10_000_000),
  USER_MAX_WORKER_SLOTS: integer(0, 0, 1000),
  DELETED_WORKFLOW_RETENTION_SECONDS: integer(0, 0, 31_536_000),
  TOKEN_RATE_LIMIT_PER_MINUTE: integer(120, 1, 1_000_000),
  TOKEN_FAILED_AUTH_LIMIT_PER_MINUTE: integer(60, 1, 1_000_000),
  USER_MAX_CONCURRENT_RUNS: integer(10, 1, 1_000_000),
  USER_RUNS_PER_MINUTE: integer(120, 1, 1_000_000),
  EVENT_STREAMS_PER_KEY: integer(20, 1, 1_000_000),
  EVENT_STREAMS_PER_USER: integer(50, 1, 1_000_000),
  WORKFLOW_MAX_NODES: integer(100, 1, 500),
  WORKFLOW_HTTP_ALLOW_HOSTS: allowHosts(),
  WORKFLOW_HTTP_TIMEOUT_SECONDS: integer(30, 1, 600),
  WORKFLOW_HTTP_MAX_RESPONSE_BYTES: integer(1_048_576, 1024, 104_857_600),
  AGENT_MAX_ITERATIONS_CAP: integer(25, 1, 100),
  API_RATE_LIMIT_PER_MINUTE: integer(6000, 1, 100_000_000),
  PRINCIPAL_CACHE_MS: integer(200, 0, 250),
  DATABASE_STATEMENT_TIMEOUT_SECONDS: integer(5, 1, 600),
  SHUTDOWN_GRACE_SECONDS: integer(20, 1, 3_600),
  SHUTDOWN_DRAIN_SECONDS: integer(0, 0, 600),
  RUN_WORKER: z.preprocess(blankToUndefined, booleanText.optional()),
  RESPONSE_VALIDATION: z.preprocess(blankToUndefined, booleanText.optional()),
  DEMO: z.preprocess(blankToUndefined, booleanText.optional()),
  DEMO_MODELS: z.preprocess(blankToUndefined, booleanText.optional()),
  SIGNUP: z.preprocess(blankToUndefined, booleanText.optional()),
  DPOP_REQUIRE_NONCE: z.preprocess(blankToUndefined, booleanText.optional()),
  CLIENT_REGISTRATION: z.preprocess(blankToUndefined, z.enum(CLIENT_REGISTRATION_MODES).default('off')),
  CLIENT_REGISTRATION_PER_HOUR: integer(20, 1, 100_000),
  SECRETS_KEY: z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine((s) => parseKek(s) !== null, { error: KEK_HINT })
      .optional(),
  ),
  SECRETS_KEY_PREVIOUS: z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine((s) => s.split(',').every((k) => parseKek(k) !== null), {
        error: `must be a comma-separated list of keys; each ${KEK_HINT}`,
      })
      .optional(),
  ),
  PASSWORD_HASH_COST: integer(17, 10, 20),
  METRICS_TOKEN: z.preprocess(
    blankToUndefined,
    z.string().min(16, { error: 'must be at least 16 characters (it guards /metrics)' }).optional(),
  ),
  HOOK_DELIVERY_WINDOW_SECONDS: integer(259_200, 0, 31_536_000),
  RUN_DETAIL_MAX_ITEM_STEPS: integer(1000, 0, 100_000),
  APPROVAL_MAX_WAIT_SECONDS: integer(604_800, 1, 31_536_000),
  DEVICE_CODE_TTL_SECONDS: integer(600, 60, 1800),
  CLIENT_ID_METADATA_DOCUMENT_HOSTS: hostNames(),
});

/** Express's `trust proxy`: a boolean, a hop count, or a list of addresses / subnet names. */
function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined) return false;
  const v = value.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (/^\d+$/.test(v)) return Number(v);
  return value.trim();
}

function parseModels(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function crossFieldProblems(env: z.infer<typeof envSchema>): string[] {
  const problems: string[] = [];
  if (env.MODEL_PROVIDER_MODELS && !env.MODEL_PROVIDER_BASE_URL) {
    problems.push('MODEL_PROVIDER_MODELS: needs MODEL_PROVIDER_BASE_URL, the provider those models are routed to');
  }
  if (env.NODE_ENV === 'production' && !env.SECRETS_KEY) {
    problems.push(
      'SECRETS_KEY: required in production (the key that seals signing keys and the session key at rest); create one with `openssl rand -base64 32`',
    );
  }
  if (env.NODE_ENV === 'production' && env.DEMO) {
    problems.push(
      'DEMO: demo data (a known login) is never created in production; create the first owner with `npm run -s admin -- user create`',
    );
  }
  if (env.NODE_ENV === 'production' && env.PASSWORD_HASH_COST < 17) {
    problems.push(
      `PASSWORD_HASH_COST: at least 17 in production (scrypt N=2^17, OWASP's minimum; got ${env.PASSWORD_HASH_COST})`,
    );
  }
  if (env.NODE_ENV === 'production' && env.TRUST_PROXY?.trim().toLowerCase() === 'true') {
    // `true` makes the leftmost X-Forwarded-For address the client's, and a client writes that one
    // itself: every per-address limit (failed client auth, logins) is evaded by changing it.
    problems.push(
      'TRUST_PROXY: `true` trusts an X-Forwarded-For address any client can forge (so per-address limits are evaded); give the number of proxies in front of the service (e.g. 1) or their addresses (e.g. loopback, 10.0.0.0/8)',
    );
  }
  if (env.SECRETS_KEY_PREVIOUS && !env.SECRETS_KEY) {
    problems.push('SECRETS_KEY_PREVIOUS: needs SECRETS_KEY, the key that replaces them');
  }
  if (env.BASE_URL) {
    const u = new URL(env.BASE_URL);
    if (u.search || u.hash) problems.push(`BASE_URL: must not have a query or fragment (got "${env.BASE_URL}")`);
  }
  return problems;
}

/** Reads and validates the environment; throws a ConfigError that lists every bad value. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const e = parsed.data;
  const prices = priceTableOf(e);
  const problems = [...crossFieldProblems(e), ...('problems' in prices ? prices.problems : [])];
  if (problems.length || 'problems' in prices) throw new ConfigError(problems);

  return Object.freeze({
    ...serviceSettings(e),
    ...runSettings(e),
    ...accessSettings(e),
    ...fairnessSettings(e),
    /** The operator's price per million tokens of each model, one currency (src/shared/prices.ts); null: no costs. */
    MODEL_PRICES: prices.table,
  });
}

/**
 * A worker's configuration: it serves no HTTP, so its PORT is not its business (a worker
 * refused `PORT=0`). A PORT the API would accept still sets BASE_URL's default as it does there;
 * any other value is ignored.
 */
export function loadWorkerConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(envSchema.shape.PORT.safeParse(env.PORT).success ? env : { ...env, PORT: undefined });
}

type Env = z.infer<typeof envSchema>;

/** Where the service listens and stores, its model provider, token lifetimes and body limit. */
function serviceSettings(e: Env) {
  return {
    PORT: e.PORT,
    HOST: e.HOST,
    /** Public base URL without a trailing slash; the OAuth/JWT issuer. */
    BASE_URL: (e.BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    /** Absent: the service runs an embedded PostgreSQL under DATA_DIR/pg. */
    DATABASE_URL: e.DATABASE_URL,
    /** Absent: the queue uses the store when it is PostgreSQL (see resolveQueueUrl in src/db/connect.ts). */
    QUEUE_URL: e.QUEUE_URL,
    DATA_DIR: e.DATA_DIR,
    EMBEDDED_PG_PORT: e.EMBEDDED_PG_PORT,
    NODE_ENV: e.NODE_ENV,
    LOG_LEVEL: e.LOG_LEVEL,
    TRUST_PROXY: parseTrustProxy(e.TRUST_PROXY),
    MODEL_PROVIDER_BASE_URL: e.MODEL_PROVIDER_BASE_URL?.replace(/\/+$/, ''),
    MODEL_PROVIDER_API_KEY: e.MODEL_PROVIDER_API_KEY,
    /** Model names routed to the OpenAI-compatible provider. */
    MODEL_PROVIDER_MODELS: Object.freeze(parseModels(e.MODEL_PROVIDER_MODELS)) as readonly string[],
    AUTH_CODE_TTL_SECONDS: e.AUTH_CODE_TTL_SECONDS,
    ACCESS_TOKEN_TTL_SECONDS: e.ACCESS_TOKEN_TTL_SECONDS,
    REFRESH_TOKEN_TTL_SECONDS: e.REFRESH_TOKEN_TTL_SECONDS,
    /** How long a rotated refresh token may be presented again (a retried refresh) before its reuse revokes the grant; 0: never. */
    REFRESH_REUSE_GRACE_SECONDS: e.REFRESH_REUSE_GRACE_SECONDS,
    PROXY_TOKEN_TTL_SECONDS: e.PROXY_TOKEN_TTL_SECONDS,
    /** OpenID Connect ID tokens' lifetime (`exp` - `iat`); their signing keys stay published at least this long. */
    ID_TOKEN_TTL_SECONDS: e.ID_TOKEN_TTL_SECONDS,
    /** How long a pushed authorization request's request_uri may be used (RFC 9126 `expires_in`). */
    PAR_REQUEST_URI_TTL_SECONDS: e.PAR_REQUEST_URI_TTL_SECONDS,
    WORKFLOW_MAX_TOKENS_LIMIT: e.WORKFLOW_MAX_TOKENS_LIMIT,
    BODY_LIMIT_BYTES: e.BODY_LIMIT_BYTES,
    /** How long a request waits for the store's answer to a statement, and for a pooled connection (migrations are not bounded). */
    DATABASE_STATEMENT_TIMEOUT_SECONDS: e.DATABASE_STATEMENT_TIMEOUT_SECONDS,
    /** After SIGTERM, how long the process may take to finish in-flight work before it exits 1. */
    SHUTDOWN_GRACE_SECONDS: e.SHUTDOWN_GRACE_SECONDS,
    /** After SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes. */
    SHUTDOWN_DRAIN_SECONDS: e.SHUTDOWN_DRAIN_SECONDS,
  };
}

/** What runs may take: time, concurrency, compute, output sizes, quotas. */
function runSettings(e: Env) {
  return {
    RUN_TIMEOUT_SECONDS: e.RUN_TIMEOUT_SECONDS,
    /** Runs one worker process executes at once (each mostly waits on the store and the model provider). */
    RUN_CONCURRENCY: e.RUN_CONCURRENCY,
    /** How often pg-boss's scheduler looks for due cron ticks (one process a pass, across all of them). */
    SCHEDULE_CHECK_INTERVAL_SECONDS: e.SCHEDULE_CHECK_INTERVAL_SECONDS,
    /** Compute processes (children) of a process that executes runs (templates and every node that computes); 0: one per core but one, at least 2. */
    COMPUTE_PROCESSES: e.COMPUTE_PROCESSES,
    /** Heap of each compute process (MB): a computation that needs more fails with `compute_limit`, the process lives. */
    COMPUTE_HEAP_MB: e.COMPUTE_HEAP_MB,
    /** The longest one computation (a template's rendering) may run before its compute process is killed (`compute_limit`). */
    COMPUTE_TIME_LIMIT_MS: e.COMPUTE_TIME_LIMIT_MS,
    /** Compute processes one user's runs may hold at once; 0: half of them (rounded up). */
    COMPUTE_USER_MAX_PROCESSES: e.COMPUTE_USER_MAX_PROCESSES,
    /** The time a run's computations may take together (summed over its nodes); past it the run fails with `compute_limit`. */
    RUN_COMPUTE_MAX_MS: e.RUN_COMPUTE_MAX_MS,
    /** The longest text one node may produce; longer fails the node with `output_too_large`. */
    NODE_TEXT_MAX_CHARS: e.NODE_TEXT_MAX_CHARS,
    /** The characters a run's node texts may hold together; more fails the run with `output_too_large`. */
    RUN_TEXT_MAX_CHARS: e.RUN_TEXT_MAX_CHARS,
    /** The longest run output as stored (JSON); longer fails the run with `output_too_large`. */
    RUN_OUTPUT_MAX_CHARS: e.RUN_OUTPUT_MAX_CHARS,
    /** Node executions a run may make, every map item's and called workflow's included; past it the run fails with `too_many_steps`. */
    RUN_MAX_STEPS: e.RUN_MAX_STEPS,
    /** Items a run's maps may take together (nested maps' multiplied); a save whose nested max_items make more is a 422, a run past it fails with `too_many_items`. */
    RUN_MAX_ITEMS: e.RUN_MAX_ITEMS,
    /** Events a run may store (its end's aside); past it the run fails with `too_many_events`. */
    RUN_MAX_EVENTS: e.RUN_MAX_EVENTS,
    /** Slots of a worker's RUN_CONCURRENCY one user's runs may hold at once; 0: half of them (rounded up). */
    USER_MAX_WORKER_SLOTS: e.USER_MAX_WORKER_SLOTS,
    /** How long a deleted workflow's runs stay readable before the workflow is gone (0: at once). */
    DELETED_WORKFLOW_RETENTION_SECONDS: e.DELETED_WORKFLOW_RETENTION_SECONDS,
    /** Requests per client and minute to the token and revocation endpoints. */
    TOKEN_RATE_LIMIT_PER_MINUTE: e.TOKEN_RATE_LIMIT_PER_MINUTE,
    /** Failed client authentications per source address and minute (any client id, unknown ones included). */
    TOKEN_FAILED_AUTH_LIMIT_PER_MINUTE: e.TOKEN_FAILED_AUTH_LIMIT_PER_MINUTE,
    /** Runs one user may have queued or running at once; more are refused with 429. */
    USER_MAX_CONCURRENT_RUNS: e.USER_MAX_CONCURRENT_RUNS,
    /** Runs one user may start per minute; more are refused with 429. */
    USER_RUNS_PER_MINUTE: e.USER_RUNS_PER_MINUTE,
    /** Run event streams one API key may hold open on one API process; more are refused with 429. */
    EVENT_STREAMS_PER_KEY: e.EVENT_STREAMS_PER_KEY,
    /** Run event streams one user may hold open on one API process (all their keys); more are refused with 429. */
    EVENT_STREAMS_PER_USER: e.EVENT_STREAMS_PER_USER,
    /** Nodes a workflow may have (at most 500, the contract's bound); more are a 422 on /nodes. */
    WORKFLOW_MAX_NODES: e.WORKFLOW_MAX_NODES,
    /** Hosts, domains, addresses and ranges outbound requests from user code may reach though private (src/outbound/allowList.ts). */
    WORKFLOW_HTTP_ALLOW_HOSTS: Object.freeze(
      (parseAllowHosts(e.WORKFLOW_HTTP_ALLOW_HOSTS) as { entries: string[] }).entries,
    ) as readonly string[],
    /** The longest an outbound request from user code may take, redirects and body included; an http_request node's timeout_seconds is at most this. */
    WORKFLOW_HTTP_TIMEOUT_SECONDS: e.WORKFLOW_HTTP_TIMEOUT_SECONDS,
    /** The largest response body an outbound request from user code takes. */
    WORKFLOW_HTTP_MAX_RESPONSE_BYTES: e.WORKFLOW_HTTP_MAX_RESPONSE_BYTES,
    /** How long a trigger answers a sender's repeated delivery id with the run its first delivery started (0: never deduplicated). */
    HOOK_DELIVERY_WINDOW_SECONDS: e.HOOK_DELIVERY_WINDOW_SECONDS,
    /** Steps inside map items a run's detail (getRun) shows; the rest are on listRunSteps. */
    RUN_DETAIL_MAX_ITEM_STEPS: e.RUN_DETAIL_MAX_ITEM_STEPS,
    /** The most model calls an agent node makes, whatever its max_iterations says. */
    AGENT_MAX_ITERATIONS_CAP: e.AGENT_MAX_ITERATIONS_CAP,
    /** Hosts whose https URLs are accepted as client_ids (Client ID Metadata Documents); empty: off. */
    CLIENT_ID_METADATA_DOCUMENT_HOSTS: Object.freeze(
      hostList(e.CLIENT_ID_METADATA_DOCUMENT_HOSTS),
    ) as readonly string[],
  };
}

/** Request limits, the principal cache, what is on by default per environment, and the secrets. */
function accessSettings(e: Env) {
  return {
    /** Requests per minute per OAuth grant or raw access token on the open, serverless and workflow APIs. */
    API_RATE_LIMIT_PER_MINUTE: e.API_RATE_LIMIT_PER_MINUTE,
    /**
     * How long one process may serve a bearer, API-key or proxy-token principal from its cache,
     * counted from when its read began; every revoking call waits this long after its commit
     * (src/shared/principalLease.ts). 0: no cache, no wait.
     */
    PRINCIPAL_CACHE_MS: e.PRINCIPAL_CACHE_MS,
    /** `npm start` also executes runs; false leaves them to `npm run worker` processes. */
    RUN_WORKER: e.RUN_WORKER ?? true,
    /** Validate responses against openapi.yaml; on by default except in production. */
    RESPONSE_VALIDATION: e.RESPONSE_VALIDATION ?? e.NODE_ENV !== 'production',
    /**
     * Seed the demo user, org, app and API key on first start (`DEMO`, or `npm start -- --demo`):
     * by default only in development on the embedded database; never in production.
     */
    DEMO: e.DEMO ?? (e.NODE_ENV === 'development' && !e.DATABASE_URL),
    /**
     * Serve the demo models `echo-slow` and `echo-fail[-N]` (src/runs/providers/demo.ts), which
     * show a live run, a failure and a cancel with no provider: by default in development only.
     */
    DEMO_MODELS: e.DEMO_MODELS ?? e.NODE_ENV === 'development',
    /** Anyone may create an account at /signup: by default in development only; an operator sets SIGNUP=true to open it elsewhere. */
    SIGNUP: e.SIGNUP ?? e.NODE_ENV === 'development',
    /**
     * The key-encryption key that seals secrets at rest; absent outside production, where the
     * service keeps a generated one in DATA_DIR/secrets.key (see src/shared/keyEncryptionKey.ts).
     */
    SECRETS_KEY: e.SECRETS_KEY ? parseKek(e.SECRETS_KEY)! : undefined,
    /** Former keys, accepted for opening until `admin secrets reseal` has resealed everything. */
    SECRETS_KEY_PREVIOUS: Object.freeze(
      (e.SECRETS_KEY_PREVIOUS ?? '')
        .split(',')
        .filter((k) => k.trim())
        .map((k) => parseKek(k)!),
    ) as readonly Buffer[],
    /** scrypt cost (log2 N, r=8, p=1) of new password hashes; older, cheaper hashes are upgraded at login. */
    PASSWORD_HASH_COST: e.PASSWORD_HASH_COST,
    /** Bearer token that GET /metrics requires; absent: /metrics is off (404). */
    METRICS_TOKEN: e.METRICS_TOKEN,
    /** The longest an approval node waits (its timeout_seconds' cap and default), and its link's life. */
    APPROVAL_MAX_WAIT_SECONDS: e.APPROVAL_MAX_WAIT_SECONDS,
    /** How long a device authorization's device and user codes live (RFC 8628 3.2 expires_in). */
    DEVICE_CODE_TTL_SECONDS: e.DEVICE_CODE_TTL_SECONDS,
    /** DPoP proofs must carry a server nonce (RFC 9449 8, 9); off by default, as node-oidc-provider's requireNonce. */
    DPOP_REQUIRE_NONCE: e.DPOP_REQUIRE_NONCE ?? false,
    /** Client registration (RFC 7591): `off` (the default, as node-oidc-provider's), `initial_access_token` or `open`. */
    CLIENT_REGISTRATION: e.CLIENT_REGISTRATION,
    /** Client registrations one address may make per hour. */
    CLIENT_REGISTRATION_PER_HOUR: e.CLIENT_REGISTRATION_PER_HOUR,
  };
}

/**
 * Per-user storage quotas (workflows, versions kept, bytes, runs kept), held `Prefer: wait`
 * requests, and the HTTP server's socket timeouts: docs/operating.md's configuration table says what each does.
 */

export type Config = ReturnType<typeof loadConfig>;
