// The per-user limits and fair sharing of shared capacity: schedule ticks, callback deliveries,
// stored workflows, versions and runs, held requests and sockets (docs/operating.md, configuration table).
// Read by src/config.ts with the rest of the environment.
import type { z } from 'zod';

type Integer = (fallback: number, min: number, max: number) => z.ZodType<number, unknown>;

export function fairnessEnv(integer: Integer) {
  return {
    SCHEDULE_TICK_CONCURRENCY: integer(8, 1, 256),
    SCHEDULE_TICK_BATCH_SIZE: integer(20, 1, 500),
    SCHEDULE_TICKS_PER_USER: integer(2, 1, 256),
    SCHEDULE_MIN_INTERVAL_SECONDS: integer(60, 60, 86_400),
    USER_MAX_SCHEDULES: integer(100, 1, 1_000_000),
    CALLBACK_TIMEOUT_MS: integer(5_000, 100, 60_000),
    CALLBACK_CONCURRENCY: integer(8, 1, 1000),
    CALLBACK_USER_CONCURRENCY: integer(4, 1, 1000),
    CALLBACK_ENDPOINT_CONCURRENCY: integer(2, 1, 1000),
    CALLBACK_PAUSE_AFTER_FAILURES: integer(20, 0, 1_000_000),
    CALLBACK_PAUSE_AFTER_SECONDS: integer(86_400, 0, 31_536_000),
    USER_STEPS_PER_SECOND: integer(500, 0, 1_000_000),
    USER_MAX_WORKFLOWS: integer(1_000, 1, 10_000_000),
    WORKFLOW_MAX_VERSIONS: integer(50, 1, 100_000),
    USER_MAX_STORED_BYTES: integer(100 * 1024 * 1024, 1024, 1_099_511_627_776),
    RUN_RETENTION_DAYS: integer(30, 0, 36_500),
    USER_MAX_STORED_RUNS: integer(10_000, 0, 1_000_000_000),
    WAITS_PER_KEY: integer(50, 0, 1_000_000),
    WAITS_PER_USER: integer(100, 0, 1_000_000),
    HTTP_HEADERS_TIMEOUT_SECONDS: integer(20, 1, 600),
    HTTP_REQUEST_TIMEOUT_SECONDS: integer(30, 1, 3_600),
    HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: integer(65, 1, 600),
  };
}

type FairnessEnv = { [K in keyof ReturnType<typeof fairnessEnv>]: number };

export function fairnessSettings(e: FairnessEnv) {
  return {
    /** Tick handlers of workflow schedules in one process that executes runs (each takes a batch of due ticks). */
    SCHEDULE_TICK_CONCURRENCY: e.SCHEDULE_TICK_CONCURRENCY,
    /** Due ticks one tick handler takes at a time. */
    SCHEDULE_TICK_BATCH_SIZE: e.SCHEDULE_TICK_BATCH_SIZE,
    /** Ticks of one user's schedules in flight at once in a process: the rest wait, and other users' ticks are taken meanwhile. */
    SCHEDULE_TICKS_PER_USER: e.SCHEDULE_TICKS_PER_USER,
    /** The shortest time between two ticks of a schedule; a cron expression that fires more often is refused (`invalid_schedule`). */
    SCHEDULE_MIN_INTERVAL_SECONDS: e.SCHEDULE_MIN_INTERVAL_SECONDS,
    /** Schedules one user may have across all their workflows (`too_many_schedules` past it). */
    USER_MAX_SCHEDULES: e.USER_MAX_SCHEDULES,
    /** The longest one callback delivery attempt may take (its answer included); longer is a failed attempt, retried. */
    CALLBACK_TIMEOUT_MS: e.CALLBACK_TIMEOUT_MS,
    /** Callback deliveries one worker process makes at once. */
    CALLBACK_CONCURRENCY: e.CALLBACK_CONCURRENCY,
    /** Of those, how many one user's callbacks may take; the user's other deliveries stay queued for the others' to go out. */
    CALLBACK_USER_CONCURRENCY: e.CALLBACK_USER_CONCURRENCY,
    /** Deliveries to one callback under way at once, across every worker process. */
    CALLBACK_ENDPOINT_CONCURRENCY: e.CALLBACK_ENDPOINT_CONCURRENCY,
    /** Consecutive failed attempts after which a callback is paused (with CALLBACK_PAUSE_AFTER_SECONDS); 0: never paused. */
    CALLBACK_PAUSE_AFTER_FAILURES: e.CALLBACK_PAUSE_AFTER_FAILURES,
    /** How long a callback's attempts must have kept failing before it is paused (with CALLBACK_PAUSE_AFTER_FAILURES). */
    CALLBACK_PAUSE_AFTER_SECONDS: e.CALLBACK_PAUSE_AFTER_SECONDS,
    /** Node executions one user's runs may start a second in one process (that many at once after a quiet second); past it a step waits its turn. 0: not paced. */
    USER_STEPS_PER_SECOND: e.USER_STEPS_PER_SECOND,
    /** Workflows one user may have (`quota_exceeded` past it). */
    USER_MAX_WORKFLOWS: e.USER_MAX_WORKFLOWS,
    /** Versions kept per workflow: older ones are pruned on each write, pinned ones kept. */
    WORKFLOW_MAX_VERSIONS: e.WORKFLOW_MAX_VERSIONS,
    /** The bytes of one user's kept workflow versions (`quota_exceeded` past it). */
    USER_MAX_STORED_BYTES: e.USER_MAX_STORED_BYTES,
    /** Finished runs older than this are purged (0: never). */
    RUN_RETENTION_DAYS: e.RUN_RETENTION_DAYS,
    /** Finished runs kept per user, newest first (0: no limit). */
    USER_MAX_STORED_RUNS: e.USER_MAX_STORED_RUNS,
    /** `Prefer: wait` requests one API key may hold on one API process; past it the wait is declined. */
    WAITS_PER_KEY: e.WAITS_PER_KEY,
    /** `Prefer: wait` requests one user may hold on one API process; past it the wait is declined. */
    WAITS_PER_USER: e.WAITS_PER_USER,
    /** Node's headersTimeout: a request's headers must arrive within it. */
    HTTP_HEADERS_TIMEOUT_SECONDS: e.HTTP_HEADERS_TIMEOUT_SECONDS,
    /** Node's requestTimeout: a whole request must arrive within it. */
    HTTP_REQUEST_TIMEOUT_SECONDS: e.HTTP_REQUEST_TIMEOUT_SECONDS,
    /** Node's keepAliveTimeout: an idle kept-alive socket is closed after it. */
    HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: e.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS,
  };
}
