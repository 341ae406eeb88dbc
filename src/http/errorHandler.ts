import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { missingBearer, OAuthError, OpenAIError, Problem, type ProblemItem, type ProblemStatus } from './problems.ts';
import { isDatabaseUnavailable } from './unavailable.ts';
import { pagePaths } from './pagePaths.ts';
import { html, layout } from '../platform/html.ts';

/** Server-rendered pages answer errors with a page, never JSON. */
function errorPage(problem: Problem): string {
  return layout({ title: problem.title }, html`<h1>${problem.title}</h1><p>${problem.message}</p>`);
}

/** How a path answers errors: RFC 6749 JSON, the OpenAI shape, or RFC 9457 problem+json. */
type ErrorDialect = 'oauth' | 'openai' | 'problem' | 'page';

function dialectOf(path: string): ErrorDialect {
  if (path === '/api/open/oauth/token' || path === '/api/open/oauth/revoke') return 'oauth';
  if (path.startsWith('/serverless/')) return 'openai';
  if (pagePaths.test(path)) return 'page';
  return 'problem';
}

/** PostgreSQL refuses NUL in text (22021) and some escapes (22P05): bad input, not a server fault. */
function isUnstorableText(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05';
}

interface ValidatorError {
  status: number;
  message: string;
  errors?: { path?: string; message?: string }[];
  headers?: Record<string, string>;
}

/** express-openapi-validator and body-parser errors carry a numeric status and no class of ours. */
function isHttpError(err: unknown): err is ValidatorError {
  return typeof err === 'object' && err !== null && typeof (err as { status?: unknown }).status === 'number';
}

function toPointer(path: string | undefined): string {
  if (!path) return '';
  // The validator reports `/body/name`, `/query/per_page`, `.query.per_page` or `.body.nodes[1].config`.
  return path.startsWith('/')
    ? path
    : '/' + path.replace(/^\./, '').replace(/\[(\d+)\]/g, '.$1').split('.').join('/');
}

function validatorItems(err: ValidatorError): ProblemItem[] | undefined {
  if (!err.errors?.length) return undefined;
  return err.errors.map((e) => ({ pointer: toPointer(e.path), message: e.message ?? 'is invalid' }));
}

function bodyParserMessage(err: { type?: string; status: number; message: string }): string {
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

/** Turns any thrown value into one of our three error classes. */
function normalise(err: unknown, req: Request, dialect: ErrorDialect): Problem | OAuthError | OpenAIError {
  // A security handler keeps its precise error here: the validator would drop its headers (#604).
  const authFailure = (req as Request & { authFailure?: unknown }).authFailure;
  const ours = err instanceof Problem || err instanceof OAuthError || err instanceof OpenAIError;
  if (!ours && isHttpError(err) && (err.status === 401 || err.status === 403)) {
    err = authFailure ?? missingBearer(dialect === 'openai' ? 'serverless' : 'api');
  }

  if (err instanceof OAuthError || err instanceof OpenAIError) return err;
  if (err instanceof Problem && (dialect === 'problem' || dialect === 'page')) return err;
  if (isUnstorableText(err)) {
    err = new Problem(400, 'The request contains a character that cannot be stored or matched (such as NUL).');
  }
  if (isDatabaseUnavailable(err)) {
    const headers = { 'Retry-After': '5' };
    if (dialect === 'oauth') return new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable.', 503, headers);
    if (dialect === 'openai') return new OpenAIError(503, 'The service is temporarily unavailable.', { type: 'api_error', headers });
    return new Problem(503, 'The database is unavailable; nothing was changed. Retry later.', { headers });
  }

  let status = 500;
  let message = 'An unexpected error occurred.';
  let items: ProblemItem[] | undefined;
  let headers: Record<string, string> = {};
  if (err instanceof Problem) {
    status = err.status;
    message = err.message;
    items = err.errors;
    headers = err.headers;
  } else if (isHttpError(err) && err.status >= 400 && err.status < 500) {
    const httpError: ValidatorError & { type?: string } = err;
    status = httpError.status;
    message = httpError.type ? bodyParserMessage(httpError) : httpError.message;
    items = validatorItems(httpError);
    headers = httpError.headers ?? {};
  }

  if (dialect === 'oauth') {
    if (status === 429) return new OAuthError('slow_down', message, 429, headers);
    if (status === 405) return new OAuthError('invalid_request', message, 405, headers);
    if (status >= 500) return new OAuthError('server_error', message, 500);
    const unsupportedGrant = items?.some((i) => i.pointer === '/body/grant_type' && /allowed values/.test(i.message));
    const detail = items?.length ? items.map((i) => `${i.pointer.replace(/^\/body\//, '')} ${i.message}`).join('; ') : message;
    return unsupportedGrant
      ? new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.')
      : new OAuthError('invalid_request', detail, status === 413 || status === 415 ? status : 400, headers);
  }
  if (dialect === 'openai') {
    const detail = items?.length ? items.map((i) => `${i.pointer.replace(/^\/body\//, '')}: ${i.message}`).join('; ') : message;
    const param = items?.[0]?.pointer.replace(/^\/body\//, '').split('/')[0] ?? null;
    const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
    // OpenAI's code for a refused credential; SDKs map it to AuthenticationError.
    const code = status === 401 ? 'invalid_api_key' : null;
    return new OpenAIError(status, detail, { type, param, code, headers });
  }
  const known = [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 429, 503].includes(status);
  return new Problem((known ? status : status >= 500 ? 500 : 400) as ProblemStatus, message, { errors: items, headers });
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const dialect = dialectOf(req.path);
    const rendered = normalise(err, req, dialect);
    if (rendered.status >= 500 && !(rendered.status === 503)) {
      logger.error({ err, reqId: res.getHeader('X-Request-Id') }, 'unhandled error');
    }
    for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
    res.status(rendered.status);
    if (rendered instanceof Problem && dialect === 'page') {
      res.type('html').send(errorPage(rendered));
    } else if (rendered instanceof Problem) {
      const requestId = res.getHeader('X-Request-Id');
      const body = rendered.body(req.originalUrl.split('?')[0], typeof requestId === 'string' ? requestId : undefined);
      res.type('application/problem+json').send(JSON.stringify(body));
    } else {
      if (rendered instanceof OAuthError) res.setHeader('Cache-Control', 'no-store');
      res.json(rendered.body());
    }
  };
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new Problem(404, `No route for ${req.method} ${req.path}.`));
};
