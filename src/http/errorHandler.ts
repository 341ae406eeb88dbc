import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import {
  databaseUnavailable,
  internalError,
  missingBearer,
  OAuthError,
  OpenAIError,
  Problem,
  requestRefused,
  routeNotFound,
  unstorableText,
  type ProblemItem,
} from '../shared/errors.ts';
import { problemJson, type CatalogueError, type ErrorDialect, type ErrorSurface } from './errorDialects.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { isTransientStoreError } from '../db/transient.ts';

/** PostgreSQL refuses NUL in text (22021) and some escapes (22P05): bad input, not a server fault. */
function isUnstorableText(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05';
}

interface HttpError {
  status: number;
  message: string;
  type?: string;
  errors?: { path?: string; message?: string }[];
  headers?: Record<string, string>;
}

/** express-openapi-validator and body-parser errors carry a numeric status and no class of ours. */
function isHttpError(err: unknown): err is HttpError {
  return typeof err === 'object' && err !== null && typeof (err as { status?: unknown }).status === 'number';
}

/** The validator reports `/body/name`, `/query/per_page`, `.query.per_page` or `.body.nodes[1].config`. */
export function toPointer(path: string | undefined): string {
  if (!path) return '';
  return path.startsWith('/')
    ? path
    : '/' +
        path
          .replace(/^\./, '')
          .replace(/\[(\d+)\]/g, '.$1')
          .split('.')
          .join('/');
}

function validatorItems(err: HttpError): ProblemItem[] | undefined {
  if (!err.errors?.length) return undefined;
  return err.errors.map((e) => ({ pointer: toPointer(e.path), message: e.message ?? 'is invalid' }));
}

function bodyParserMessage(err: HttpError): string {
  switch (err.type) {
    case 'entity.too.large':
      return 'The request body is too large.';
    case 'entity.parse.failed':
      return 'The request body is not valid JSON.';
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return 'The request body encoding is not supported.';
    default:
      return err.message;
  }
}

/** Turns any thrown value into an error of the catalogue. */
function toCatalogueError(err: unknown, req: Request, dialect: ErrorDialect): CatalogueError {
  if (
    isHttpError(err) &&
    (err.status === 401 || err.status === 403) &&
    !(err instanceof Problem || err instanceof OAuthError || err instanceof OpenAIError)
  ) {
    // A security handler keeps its precise error on the request (a refusal, or a fault such as a
    // database outage): the validator drops it (#604).
    err = req.authFailure ?? missingBearer(dialect.realm);
  }
  if (err instanceof Problem || err instanceof OAuthError || err instanceof OpenAIError) return err;
  if (isUnstorableText(err)) return unstorableText();
  // A lock conflict or a lost connection (a deadlock victim, a lock wait timeout, MariaDB's 1467):
  // the store may answer on a retry, so a 503 with Retry-After, not a 500.
  if (isDatabaseUnavailable(err) || isTransientStoreError(err)) return databaseUnavailable();
  if (isHttpError(err) && err.status >= 400 && err.status < 500) {
    // Our words, not the validator's ("unsupported media type undefined").
    const message =
      err.status === 415 ? 'Send the body as application/json.' : err.type ? bodyParserMessage(err) : err.message;
    return requestRefused(err.status, message, validatorItems(err), err.headers ?? {});
  }
  return internalError();
}

/** The one error handler: the dialect of the first surface whose paths match, else problem+json. */
export function errorHandler(logger: Logger, surfaces: ErrorSurface[]): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const dialect = surfaces.find((s) => s.paths.test(req.path))?.dialect ?? problemJson;
    const error = toCatalogueError(err, req, dialect);
    if (error.status >= 500 && error.status !== 503) {
      logger.error({ err, reqId: res.getHeader('X-Request-Id') }, 'unhandled error');
    }
    dialect.send(error, req, res);
  };
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(routeNotFound(req.method, req.path));
};
