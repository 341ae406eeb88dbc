import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type Logger, type DestinationStream } from 'pino';
import { pinoHttp } from 'pino-http';

/** Field names whose values are secrets wherever they appear in a log line. */
const secretFields = ['authorization', 'cookie', 'set-cookie', 'client_secret', 'code', 'code_verifier', 'refresh_token', 'access_token', 'password', 'token', 'proxy_access_token'];

export function createLogger(options: { level?: string; destination?: DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      redact: {
        paths: [...secretFields, ...secretFields.map((f) => `*.${f}`), ...secretFields.map((f) => `*.*.${f}`)],
        censor: '[redacted]',
      },
    },
    options.destination,
  );
}

/** Removes the values of secret query parameters (`code`, `state` is kept) from a URL for logging. */
export function scrubUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const name of [...params.keys()]) {
    if (secretFields.includes(name.toLowerCase())) params.set(name, '[redacted]');
  }
  return `${url.slice(0, q)}?${params.toString()}`;
}

const requestIdPattern = /^[A-Za-z0-9._-]{1,64}$/;

export function httpLogger(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    // Log what identifies a request, never its headers, body or response headers (Location carries codes).
    serializers: {
      req: (req: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
        id: req.id,
        method: req.method,
        url: scrubUrl(req.url),
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
  });
}
