// The one catalogue of the errors the service answers with: RFC 9457 problems (each with its own
// `code`) here; the authorization endpoint's errors (a page, or RFC 6749 4.1.2.1 to the
// redirect_uri) and RFC 6749 5.2 OAuth errors in oauthErrors.ts, the OpenAI error shape of the
// gateway in openaiErrors.ts, and why a run failed in runErrors.ts, all exported from here. Code
// throws them by name (`throw workflowNotFound(id)`); the error dialect of the route renders them
// (src/http/errorDialects.ts); the admin CLI prints their message.

/** One failed rule of a request, as a JSON pointer into it (`/body/nodes/1/config`). */
export interface ProblemItem {
  pointer: string;
  message: string;
}

// The problem type of each status: the `type` URI's last segment and the `title` (RFC 9457 3.1).
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
  431: ['request-header-fields-too-large', 'Request Header Fields Too Large'],
  500: ['internal', 'Internal Server Error'],
  503: ['unavailable', 'Service Unavailable'],
} as const satisfies Record<number, readonly [string, string]>;

export type ProblemStatus = keyof typeof problemTypes;

/**
 * Every problem the service answers with, by its own stable `code` (what clients branch on, as
 * fastify's lib/errors.js names each error), and its status. openapi.yaml's Problem.code lists
 * exactly these (src/shared/errors.unit.test.ts checks); a code, once published, never changes meaning.
 */
export const PROBLEM_CODES = {
  invalid_request: 400,
  invalid_field: 400,
  invalid_run_inputs: 400,
  invalid_schedule: 400,
  invalid_if_match: 400,
  unstorable_text: 400,
  callback_url_refused: 400,
  unsupported_api_version: 400,
  missing_credentials: 401,
  invalid_access_token: 401,
  invalid_api_key: 401,
  invalid_proxy_token: 401,
  wrong_token_kind: 401,
  user_gone: 401,
  invalid_signature: 401,
  insufficient_scope: 403,
  missing_permission: 403,
  demo_in_production: 403,
  route_not_found: 404,
  workflow_not_found: 404,
  run_not_found: 404,
  trigger_not_found: 404,
  callback_not_found: 404,
  secret_not_found: 404,
  workflow_version_not_found: 404,
  schedule_not_found: 404,
  user_not_found: 404,
  organization_not_found: 404,
  not_a_member: 404,
  namespace_not_found: 404,
  application_not_found: 404,
  client_not_found: 404,
  client_secret_not_found: 404,
  access_token_not_found: 404,
  access_token_expired: 404,
  session_not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  not_representable_in_api_version: 406,
  name_taken: 409,
  last_owner: 409,
  concurrent_update: 409,
  idempotency_key_reused: 409,
  run_already_finished: 409,
  hook_limit_reached: 409,
  too_many_client_secrets: 409,
  too_many_schedules: 409,
  last_client_secret: 409,
  demo_exists: 409,
  too_many_secrets: 409,
  quota_exceeded: 409,
  stale_version: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_workflow: 422,
  rate_limited: 429,
  too_many_concurrent_runs: 429,
  too_many_runs_per_minute: 429,
  too_many_event_streams: 429,
  request_header_fields_too_large: 431,
  internal_error: 500,
  database_unavailable: 503,
  queue_unavailable: 503,
  runs_not_configured: 503,
  run_not_retryable: 409,
  node_not_found: 404,
  run_not_waiting: 409,
  invalid_approval_answer: 400,
  budget_exhausted: 429,
  prices_not_configured: 409,
  invalid_dpop_proof: 401,
  use_dpop_nonce: 401,
} as const satisfies Record<string, ProblemStatus>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

export const PROBLEM_BASE = 'https://docs.openauth.dev/problems/';

/** An RFC 9457 problem. Throw one of the named errors below rather than building one. */
export class Problem extends Error {
  readonly status: ProblemStatus;
  /** This problem's own stable code (`workflow_not_found`, `name_taken`): for clients and code to branch on. */
  readonly code: ProblemCode;
  readonly type: string;
  readonly title: string;
  readonly errors: ProblemItem[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: { errors?: ProblemItem[]; headers?: Record<string, string>; type?: string; title?: string } = {},
  ) {
    super(detail);
    const status = PROBLEM_CODES[code];
    const [slug, title] = problemTypes[status];
    this.status = status;
    this.code = code;
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
      code: this.code,
      detail: this.message,
      ...(instance ? { instance } : {}),
      ...(requestId ? { request_id: requestId } : {}),
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

// --- 4xx from the HTTP layer (body parser, contract validator) -----------------------------------

const refusalCodes: Partial<Record<number, ProblemCode>> = {
  404: 'route_not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** A request the body parser or the contract validator refused; any other 4xx is bad input (400). */
export const requestRefused = (
  status: number,
  detail: string,
  errors?: ProblemItem[],
  headers: Record<string, string> = {},
) => new Problem(refusalCodes[status] ?? 'invalid_request', detail, { errors, headers });

/** The request line and headers are over the server's limit (answered before express sees the request). */
export const headersTooLarge = (maxBytes: number) =>
  new Problem('request_header_fields_too_large', `The request line and headers are larger than ${maxBytes} bytes.`);

export const internalError = () => new Problem('internal_error', 'An unexpected error occurred.');

// --- 400: bad input ------------------------------------------------------------------------------

/** A field of a service's input breaks its rule (the admin CLI and the settings pages show the detail). */
export const invalidField = (detail: string, pointer: string, message: string) =>
  new Problem('invalid_field', detail, { errors: [{ pointer, message }] });

export const invalidRunInputs = (items: ProblemItem[]) =>
  new Problem(
    'invalid_run_inputs',
    `The inputs do not match the workflow's text_input variables: ${items.map((p) => p.pointer.slice('/body/inputs/'.length)).join(', ')}.`,
    {
      errors: items,
    },
  );

export const invalidIfMatch = (tag: string) =>
  new Problem(
    'invalid_if_match',
    `If-Match must be an ETag such as "3" or a version number, not ${JSON.stringify(tag)}.`,
  );

export const unstorableText = () =>
  new Problem('unstorable_text', 'The request contains a character that cannot be stored or matched (such as NUL).');

// --- 401 / 403: credentials (RFC 6750 3: every bearer failure carries WWW-Authenticate) ----------

export const missingBearer = (realm = 'api') =>
  new Problem('missing_credentials', 'Send credentials as Authorization: Bearer <token>.', {
    headers: { 'WWW-Authenticate': `Bearer realm="${realm}"` },
  });

type InvalidBearerCode =
  'invalid_access_token' | 'invalid_api_key' | 'invalid_proxy_token' | 'wrong_token_kind' | 'user_gone';

const invalidBearer = (code: InvalidBearerCode, detail: string, realm = 'api') =>
  new Problem(code, detail, {
    headers: {
      'WWW-Authenticate': `Bearer realm="${realm}", error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`,
    },
  });

export const invalidAccessToken = () =>
  invalidBearer('invalid_access_token', 'The access token is invalid, expired or revoked.');
export const invalidApiKey = () => invalidBearer('invalid_api_key', 'The API key is invalid or was deleted.');
export const invalidProxyToken = () =>
  invalidBearer(
    'invalid_proxy_token',
    'The proxy token is invalid, expired, or its authorization was revoked.',
    'serverless',
  );
/** A bearer token of another kind (an OAuth token where an API key is wanted): RFC 6750 3.1 `invalid_token`. */
export const wrongKindOfToken = (realm: 'api' | 'serverless') =>
  invalidBearer(
    'wrong_token_kind',
    `This endpoint takes ${realm === 'serverless' ? 'a proxy token or an API key' : 'an API key (sk_...)'}, not this kind of token.`,
    realm,
  );
export const userGone = () => invalidBearer('user_gone', 'The user of this access token no longer exists.');
/** RFC 8707: an access token whose audience does not name the resource it was sent to. */
export const tokenForAnotherResource = () =>
  invalidBearer('invalid_access_token', 'Refused here: the token was issued for another resource (RFC 8707).');

export const insufficientScope = (scope: string) =>
  new Problem('insufficient_scope', `This endpoint needs the scope ${scope}.`, {
    type: 'insufficient-scope',
    title: 'Insufficient scope',
    headers: { 'WWW-Authenticate': `Bearer realm="api", error="insufficient_scope", scope="${scope}"` },
  });

export const missingPermission = (permission: string) =>
  new Problem('missing_permission', `This API key does not have the ${permission} permission.`);

export const demoInProduction = () =>
  new Problem('demo_in_production', 'Demo data (a known login) is never created in production.');

// --- 404: not found or not yours ----------------------------------------------------------------

export const routeNotFound = (method: string, path: string) =>
  new Problem('route_not_found', `No route for ${method} ${path}.`);
export const workflowNotFound = (id: string) => new Problem('workflow_not_found', `No workflow ${id}.`);
export const runNotFound = (id: string) => new Problem('run_not_found', `No run ${id}.`);
export const secretNotFound = (name: string) => new Problem('secret_not_found', `No secret ${name}.`);
export const workflowVersionNotFound = (id: string, version: number) =>
  new Problem('workflow_version_not_found', `Workflow ${id} has no version ${version}.`);
export const userNotFound = (login: string) => new Problem('user_not_found', `No user with login "${login}".`);
export const organizationNotFound = (namespace: string) =>
  new Problem('organization_not_found', `No organization "${namespace}".`);
export const notAMember = (login: string, namespace: string) =>
  new Problem('not_a_member', `"${login}" is not a member of "${namespace}".`);
/** 404, not 403: a namespace the user cannot use is indistinguishable from one that does not exist. */
export const namespaceNotFound = (namespace: string) =>
  new Problem('namespace_not_found', `No namespace "${namespace}" for this user.`);
export const applicationNotFound = (id: number) => new Problem('application_not_found', `No application ${id}.`);
export const clientNotFound = (clientId: string) =>
  new Problem('client_not_found', `No application with client_id "${clientId}".`);
export const clientSecretNotFound = (secretId: number, appName: string) =>
  new Problem('client_secret_not_found', `No client secret ${secretId} for ${appName}.`);
export const accessTokenNotFound = (id: number) => new Problem('access_token_not_found', `No access token ${id}.`);
export const sessionNotFound = (login: string, id: string) =>
  new Problem('session_not_found', `No session ${id} of user "${login}" (see session list --user ${login}).`);
export const accessTokenExpired = (id: number) =>
  new Problem('access_token_expired', `Access token ${id} has expired; its owner can create a new one in settings.`);
/** Another namespace's token is not found, as one that does not exist. */
export const accessTokenNotInNamespace = (id: number, namespace: string) =>
  new Problem('access_token_not_found', `No access token ${id} in namespace "${namespace}".`);

// --- 405 / 409 / 412 / 422 / 429 / 503 -----------------------------------------------------------

export const methodNotAllowed = (method: string, path: string, allow: string[]) =>
  new Problem('method_not_allowed', `${method} is not allowed on ${path}.`, { headers: { Allow: allow.join(', ') } });

export const nameTaken = (name: string) => new Problem('name_taken', `The name "${name}" is already taken.`);
export const lastOwner = (login: string, namespace: string) =>
  new Problem('last_owner', `"${login}" is the last owner of "${namespace}"; add another owner first.`);
/** A stale `If-Match` (RFC 9110 13.1.1): 412, with the current ETag so the client can re-read. */
export const staleVersion = (current: number, accepted: number[]) =>
  new Problem(
    'stale_version',
    accepted.length
      ? `The workflow is at version ${current}, not ${accepted.join(' or ')}.`
      : `The workflow is at version ${current}; a weak ETag (W/) never matches If-Match (RFC 9110 13.1.1).`,
    { headers: { ETag: `"${current}"` } },
  );
export const concurrentUpdate = (current: number) =>
  new Problem('concurrent_update', `The workflow changed while it was being updated; it is now at version ${current}.`);
export const idempotencyConflict = (runId: string) =>
  new Problem('idempotency_key_reused', `Idempotency-Key was already used for run ${runId} with different inputs.`);
export const runAlreadyFinished = (runId: string, status: string) =>
  new Problem('run_already_finished', `Run ${runId} is already ${status}.`);
export const tooManyClientSecrets = (appName: string, max: number) =>
  new Problem(
    'too_many_client_secrets',
    `${appName} already has ${max} client secrets. Delete the one no deployment uses any more, then generate a new one.`,
  );
/** Deleting an app's only secret leaves it unable to obtain tokens; `howToProceed` says what the caller can do. */
export const lastClientSecret = (appName: string, howToProceed: string) =>
  new Problem(
    'last_client_secret',
    `This is the only client secret of ${appName}: without it the app cannot obtain tokens. ${howToProceed}`,
  );
export const tooManySecrets = (max: number) =>
  new Problem(
    'too_many_secrets',
    `You already have ${max} secrets. Delete one you no longer use, then create this one.`,
  );
export const demoExists = (login: string) => new Problem('demo_exists', `The demo user "${login}" exists already.`);

/** Every problem of a workflow graph at once (schema-level and semantic). */
export const invalidWorkflow = (items: ProblemItem[]) =>
  new Problem(
    'invalid_workflow',
    items.length === 1 ? 'The workflow graph has 1 problem.' : `The workflow graph has ${items.length} problems.`,
    {
      errors: items,
    },
  );

export const apiRateLimited = (limitPerMinute: number, retryAfter: number) =>
  new Problem(
    'rate_limited',
    `Rate limit of ${limitPerMinute} requests per minute for this token exceeded; retry in ${retryAfter} s.`,
    {
      headers: { 'Retry-After': String(retryAfter) },
    },
  );

/** Retry-After of a refused run start while the user's runs are at the concurrency quota: about when one may have ended. */
export const RUN_QUOTA_RETRY_SECONDS = 5;
export const tooManyConcurrentRuns = (limit: number) =>
  new Problem(
    'too_many_concurrent_runs',
    `At most ${limit} runs may be queued or running at once per user; retry when one has ended.`,
    {
      headers: { 'Retry-After': String(RUN_QUOTA_RETRY_SECONDS) },
    },
  );
export const tooManyRunsPerMinute = (limit: number, retryAfter: number) =>
  new Problem(
    'too_many_runs_per_minute',
    `At most ${limit} runs may be started per minute per user; retry in ${retryAfter} s.`,
    {
      headers: { 'Retry-After': String(retryAfter) },
    },
  );

export const databaseUnavailable = () =>
  new Problem('database_unavailable', 'The database is unavailable; nothing was changed. Retry later.', {
    headers: { 'Retry-After': '5' },
  });
export const queueUnavailable = () =>
  new Problem('queue_unavailable', 'The run queue is unavailable; the run was not started. Retry later.', {
    headers: { 'Retry-After': '5' },
  });
export const runsNotConfigured = () =>
  new Problem('runs_not_configured', 'Runs are not available: no queue database is configured (QUEUE_URL).');
export const nodeNotFound = (workflowId: string, version: number, nodeId: string) =>
  new Problem('node_not_found', `Version ${version} of workflow ${workflowId} has no node ${nodeId}.`);
/** Only a run that failed or was cancelled is retried: one still going or completed has nothing to resume. */
export const runNotRetryable = (runId: string, status: string) =>
  new Problem(
    'run_not_retryable',
    `Run ${runId} is ${status}: only a failed or cancelled run can be retried (start a new run with runWorkflow instead).`,
  );

export const runNotWaiting = (runId: string, status: string) =>
  new Problem('run_not_waiting', `Run ${runId} is not waiting for an answer (it is ${status}).`);
export const invalidApprovalAnswer = (errors: ProblemItem[]) =>
  new Problem(
    'invalid_approval_answer',
    `The answer does not fit the approval node's answer_schema: ${errors.map((e) => `${e.pointer.replace(/^\/body\/answer/, '')} ${e.message}`).join('; ')}.`,
    { errors },
  );

// The OAuth endpoints', the gateway's and the runs' errors, each in a module of its own.
export * from './oauthErrors.ts';
export * from './openaiErrors.ts';
export * from './runErrors.ts';
