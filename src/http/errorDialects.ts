import type { Request, Response } from 'express';
import {
  gatewayUnavailable,
  OAuthError,
  OpenAIError,
  oauthUnavailable,
  Problem,
  unsupportedGrantType,
  type ProblemItem,
} from '../shared/errors.ts';

// How a route answers errors. Every router declares its dialect (an ErrorSurface: the paths it
// serves and the dialect); errorHandler.ts turns anything thrown into one of the catalogue's errors
// (src/shared/errors.ts) and lets the request's dialect write it.

export type CatalogueError = Problem | OAuthError | OpenAIError;

export interface ErrorDialect {
  /** The realm of the bearer challenge when the validator refused credentials on its own. */
  readonly realm: string;
  send(error: CatalogueError, req: Request, res: Response): void;
}

/** The paths a router serves and the dialect it answers errors in. */
export interface ErrorSurface {
  paths: RegExp;
  dialect: ErrorDialect;
}

/** Status and headers of the error as it is sent. */
function head(error: CatalogueError, res: Response): Response {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  return res.status(error.status);
}

function sendJson(error: OAuthError | OpenAIError, res: Response): void {
  head(error, res);
  if (error instanceof OAuthError) res.setHeader('Cache-Control', 'no-store');
  res.json(error.body());
}

function sendProblemJson(problem: Problem, req: Request, res: Response): void {
  const requestId = res.getHeader('X-Request-Id');
  head(problem, res);
  const body = problem.body(req.originalUrl.split('?')[0], typeof requestId === 'string' ? requestId : undefined);
  res.type('application/problem+json').send(JSON.stringify(body));
}

/** RFC 9457 application/problem+json: the default of every API path. */
export const problemJson: ErrorDialect = {
  realm: 'api',
  send: (error, req, res) => (error instanceof Problem ? sendProblemJson(error, req, res) : sendJson(error, res)),
};

/** Server-rendered pages answer errors with a page, never JSON. */
export function htmlPages(page: (problem: Problem) => { toString(): string }): ErrorDialect {
  return {
    realm: 'api',
    send: (error, _req, res) =>
      error instanceof Problem
        ? head(error, res)
            .type('html')
            .send(String(page(error)))
        : sendJson(error, res),
  };
}

const fieldOf = (pointer: string) => pointer.replace(/^\/body\//, '');

/** RFC 6749 5.2 JSON (`error`, `error_description`): the token and revocation endpoints. */
export const oauthJson: ErrorDialect = {
  realm: 'api',
  send(error, _req, res) {
    sendJson(error instanceof Problem ? asOAuthError(error) : error, res);
  },
};

function asOAuthError(problem: Problem): OAuthError {
  const { status, message, headers } = problem;
  const items = problem.errors;
  if (status === 429) return new OAuthError('slow_down', message, 429, headers);
  if (status === 405) return new OAuthError('invalid_request', message, 405, headers);
  if (status === 503) return oauthUnavailable();
  if (status >= 500) return new OAuthError('server_error', message, 500);
  if (status === 415)
    return new OAuthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded.', 415);
  if (items?.some((i) => i.pointer === '/body/grant_type' && /allowed values/.test(i.message)))
    return unsupportedGrantType();
  const detail = items?.length ? oauthDescription(items) : message;
  return new OAuthError('invalid_request', detail, status === 413 ? 413 : 400, headers);
}

/**
 * RFC 6749 `error_description` for form fields that break the contract, in our words: the
 * validator's wording (Ajv messages, "unsupported media type undefined") is not for integrators.
 */
function oauthDescription(items: ProblemItem[]): string {
  const fields = (pattern: RegExp) => [
    ...new Set(items.filter((i) => pattern.test(i.message)).map((i) => fieldOf(i.pointer).split('/')[0] || 'the body')),
  ];
  const missing = fields(/required property/);
  const invalid = fields(/^(?!.*required property)/);
  return [
    ...(missing.length ? [`Missing ${missing.join(', ')}.`] : []),
    ...(invalid.length ? [`Invalid ${invalid.join(', ')}.`] : []),
  ].join(' ');
}

/** The OpenAI error shape, which OpenAI SDKs parse: the serverless gateway. */
export const openAIJson: ErrorDialect = {
  realm: 'serverless',
  send(error, _req, res) {
    sendJson(error instanceof Problem ? asOpenAIError(error) : error, res);
  },
};

function asOpenAIError(problem: Problem): OpenAIError {
  const { status, message, headers } = problem;
  if (status === 503) return gatewayUnavailable();
  const items = problem.errors;
  const detail = items?.length ? items.map((i) => `${fieldOf(i.pointer)}: ${i.message}`).join('; ') : message;
  const param = items?.[0] ? fieldOf(items[0].pointer).split('/')[0]! : null;
  const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  // OpenAI's code for a refused credential; SDKs map it to AuthenticationError.
  const code = status === 401 ? 'invalid_api_key' : null;
  return new OpenAIError(status, detail, { type, param, code, headers });
}
