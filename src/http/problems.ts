// One catalogue of the errors the service answers with (RFC 9457 problem types, RFC 6749 OAuth
// errors, the OpenAI error shape on the gateway). Handlers throw these; errorHandler.ts renders them.

export interface ProblemItem {
  pointer: string;
  message: string;
}

const problemTypes = {
  400: ['bad-request', 'Bad Request'],
  401: ['unauthorized', 'Unauthorized'],
  403: ['forbidden', 'Forbidden'],
  404: ['not-found', 'Not Found'],
  405: ['method-not-allowed', 'Method Not Allowed'],
  406: ['not-acceptable', 'Not Acceptable'],
  409: ['conflict', 'Conflict'],
  412: ['precondition-failed', 'Precondition Failed'],
  413: ['payload-too-large', 'Payload Too Large'],
  415: ['unsupported-media-type', 'Unsupported Media Type'],
  422: ['invalid-workflow', 'Invalid workflow'],
  429: ['rate-limited', 'Too Many Requests'],
  500: ['internal', 'Internal Server Error'],
  503: ['unavailable', 'Service Unavailable'],
} as const satisfies Record<number, readonly [string, string]>;

export type ProblemStatus = keyof typeof problemTypes;

export const PROBLEM_BASE = 'https://docs.openauth.dev/problems/';

/** An RFC 9457 problem: `throw new Problem(404, 'No workflow wf_1.')`. */
export class Problem extends Error {
  readonly status: ProblemStatus;
  readonly type: string;
  readonly title: string;
  readonly errors: ProblemItem[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: ProblemStatus,
    detail: string,
    options: { errors?: ProblemItem[]; headers?: Record<string, string>; type?: string; title?: string } = {},
  ) {
    super(detail);
    const [slug, title] = problemTypes[status];
    this.status = status;
    this.type = PROBLEM_BASE + (options.type ?? slug);
    this.title = options.title ?? title;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  body(instance?: string, requestId?: string): Record<string, unknown> {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.message,
      ...(instance ? { instance } : {}),
      ...(requestId ? { request_id: requestId } : {}),
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

export const insufficientScope = (scope: string) =>
  new Problem(403, `This endpoint needs the scope ${scope}.`, {
    type: 'insufficient-scope',
    title: 'Insufficient scope',
    headers: { 'WWW-Authenticate': `Bearer realm="api", error="insufficient_scope", scope="${scope}"` },
  });

export const invalidBearer = (detail: string, realm = 'api') =>
  new Problem(401, detail, {
    headers: {
      'WWW-Authenticate': `Bearer realm="${realm}", error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`,
    },
  });

export const missingBearer = (realm = 'api') =>
  new Problem(401, 'Send credentials as Authorization: Bearer <token>.', {
    headers: { 'WWW-Authenticate': `Bearer realm="${realm}"` },
  });

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'slow_down'
  | 'temporarily_unavailable'
  | 'server_error';

/** An RFC 6749 5.2 error of the token endpoint. */
export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(error: OAuthErrorCode, description: string, status = 400, headers: Record<string, string> = {}) {
    super(description);
    this.error = error;
    this.status = status;
    this.headers = headers;
  }

  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

/** An error in the OpenAI wire shape, for the serverless gateway. */
export class OpenAIError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    options: { type?: string; param?: string | null; code?: string | null; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = status;
    this.type = options.type ?? 'invalid_request_error';
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}
