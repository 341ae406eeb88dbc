import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type Logger, type DestinationStream } from 'pino';
import { pinoHttp } from 'pino-http';
import type { RequestHandler } from 'express';
import pinoPretty from 'pino-pretty';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { OutageGate, OutageLog } from './outageLog.ts';
import { logTraceFields } from '../shared/tracing.ts';

/** Field names whose values are secrets wherever they appear in a log line. */
const secretFields = [
  'authorization',
  'cookie',
  'set-cookie',
  'client_secret',
  'code',
  'code_verifier',
  'refresh_token',
  'access_token',
  'password',
  'token',
  'proxy_access_token',
];

/**
 * `pretty`: human-readable lines (time, level, message, then the fields) for a person at a
 * terminal; otherwise one JSON object a line for a log collector. Redaction applies to both.
 */
export function createLogger(
  options: { level?: string; destination?: DestinationStream; pretty?: boolean; outageGate?: OutageGate } = {},
): Logger {
  const destination = options.pretty
    ? oneLineRequests(
        pinoPretty({
          colorize: true,
          translateTime: 'SYS:HH:MM:ss',
          ignore: 'pid,hostname',
          sync: true,
          destination: options.destination ?? 1,
        }),
      )
    : options.destination;
  const gate = options.outageGate ?? new OutageGate();
  return pino(
    {
      level: options.level ?? 'info',
      // trace_id and span_id of the active span (when tracing), so a line leads to its trace.
      mixin: logTraceFields,
      hooks: {
        // Lines about the store or queue being unreachable: one a window, no stack (outageLog.ts).
        logMethod(args, method, level) {
          if (level >= 40 && isOutageLine(this, args)) {
            const passed = gate.pass(args);
            if (passed) method.apply(this, passed as Parameters<typeof method>);
            return;
          }
          method.apply(this, args);
        },
      },
      redact: {
        paths: [...secretFields, ...secretFields.map((f) => `*.${f}`), ...secretFields.map((f) => `*.*.${f}`)],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * At a terminal, a request's line (pino-http's `req`, `res`, `responseTime`) becomes one line,
 * `GET /workflows 200 4ms`, instead of pino-pretty's field a line (about 11 per request), which
 * buried what the service prints once at start. A line with an error keeps its fields.
 */
function oneLineRequests(pretty: DestinationStream): DestinationStream {
  return {
    write(line: string) {
      let log: Record<string, unknown>;
      try {
        log = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return pretty.write(line);
      }
      const { req, res, responseTime, ...rest } = log as {
        req?: { method?: string; url?: string };
        res?: { statusCode?: number };
        responseTime?: number;
        [field: string]: unknown;
      };
      if (!req || !res || 'err' in rest) return pretty.write(line);
      const time = typeof responseTime === 'number' ? ` ${responseTime}ms` : '';
      rest.msg = `${req.method} ${req.url} ${res.statusCode}${time}`;
      return pretty.write(`${JSON.stringify(rest)}\n`);
    },
  };
}

/** A warn or error line about the database being unreachable: knex's own messages, or an `err` that says so. */
function isOutageLine(logger: Logger, args: unknown[]): boolean {
  if ((logger.bindings() as { component?: unknown }).component === 'knex') return true;
  const first = args[0];
  if (first instanceof Error) return isDatabaseUnavailable(first);
  return (
    typeof first === 'object' &&
    first !== null &&
    'err' in first &&
    isDatabaseUnavailable((first as { err: unknown }).err)
  );
}

/**
 * A trigger URL's path is its credential (`/hooks/wht_<token>`): a log keeps only its public first
 * characters (the `token_prefix` a list shows, enough to tell triggers apart).
 */
const triggerPath = /^(\/hooks\/)([^/?#]+)/;
const TRIGGER_SHOWN_CHARS = 12;

/** Removes the values of secret query parameters (`code`, `state` is kept) and trigger tokens from a URL for logging. */
export function scrubUrl(url: string): string {
  url = url.replace(
    triggerPath,
    (_all, path: string, token: string) => `${path}${token.slice(0, TRIGGER_SHOWN_CHARS)}[redacted]`,
  );
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const name of [...params.keys()]) {
    if (secretFields.includes(name.toLowerCase())) params.set(name, '[redacted]');
  }
  return `${url.slice(0, q)}?${params.toString()}`;
}

const requestIdPattern = /^[A-Za-z0-9._-]{1,64}$/;

/** The caller's X-Request-Id when it is a sane token, else a new one; echoed in the response. */
function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

// Log what identifies a request, never its headers, body or response headers (Location carries codes).
const serializers = {
  req: (req: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
    id: req.id,
    method: req.method,
    url: scrubUrl(req.url),
    remoteAddress: req.remoteAddress,
  }),
  res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
};

/** Load balancers and orchestrators call these every few seconds: logged at `debug` (a 503 at `warn`). */
const probePaths = new Set(['/healthz', '/readyz']);

/**
 * One line per request at `info` (probes at `debug`); failures (5xx) at `error`, except a 503 outside
 * the probes, which goes to the outage log (one `warn` line a window). When `info` is off
 * (production's LOG_LEVEL=warn), only failures can be logged, so skip pino-http's per-request child
 * logger (it serializes and redacts the request up front) and write the same lines ourselves.
 */
export function httpLogger(logger: Logger): RequestHandler {
  const outage = new OutageLog(logger);
  if (!logger.isLevelEnabled('info')) return failureLogger(logger, outage);
  return pinoHttp({
    logger,
    genReqId: requestId,
    serializers,
    customLogLevel: (req, res, err) => {
      const probe = probePaths.has(req.url ?? '');
      if (!err && res.statusCode === 503 && !probe) {
        outage.record({
          req: serializers.req({
            id: req.id,
            method: req.method ?? '',
            url: req.url ?? '',
            remoteAddress: req.socket.remoteAddress,
          }),
          res: serializers.res(res),
        });
        return 'silent';
      }
      if (err || res.statusCode >= 500) return probe && !err ? 'warn' : 'error';
      return probe ? 'debug' : 'info';
    },
  });
}

function failureLogger(logger: Logger, outage: OutageLog): RequestHandler {
  return (req, res, next) => {
    const id = requestId(req, res);
    (req as { id?: unknown }).id = id;
    const start = performance.now();
    res.once('finish', () => {
      if (res.statusCode < 500) return;
      const request = serializers.req({
        id,
        method: req.method,
        url: req.originalUrl,
        remoteAddress: req.socket.remoteAddress,
      });
      const line = { req: request, res: serializers.res(res), responseTime: Math.round(performance.now() - start) };
      if (probePaths.has(req.originalUrl)) logger.warn(line, 'not ready');
      else if (res.statusCode === 503) outage.record(line);
      else logger.error(line, 'request errored');
    });
    next();
  };
}
