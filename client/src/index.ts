/**
 * Typed client for the service, generated from openapi.yaml (openapi-fetch over its generated types),
 * with helpers for the calls that need more than one request or a stream.
 *
 *   const api = createApiClient('http://localhost:3000', { bearer: apiKey });
 *   const { data, error } = await api.GET('/api/workflows', { params: { query: { per_page: 50 } } });
 */
import createClient, { type ClientOptions, type Middleware } from 'openapi-fetch';
import type { ApiClient, paths } from './types.ts';
import { formEncode } from './token.ts';

export type { ApiClient, components, operations, paths, Schemas } from './types.ts';
export { chatCompletion, streamChatCompletion, type ChatRequest } from './chat.ts';
export { followRunEvents, waitForRun, type RunEvent } from './runs.ts';
export { formEncode, requestToken } from './token.ts';
export { StreamError, type Result } from './result.ts';
export { readServerSentEvents, type ServerSentEvent } from './sse.ts';

export interface Credentials {
  /** An OAuth access token, a proxy token or an API key, sent as `Authorization: Bearer ...`. */
  bearer?: string | undefined;
  /** Application credentials for the token endpoint, sent as HTTP Basic. */
  basic?: { clientId: string; clientSecret: string } | undefined;
}

/** HTTP Basic credentials as RFC 6749 2.3.1 wants them: each part form-urlencoded first. */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  const encode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return 'Basic ' + btoa(`${encode(clientId)}:${encode(clientSecret)}`);
}

export function authMiddleware(credentials: Credentials): Middleware {
  return {
    onRequest({ request }) {
      if (credentials.bearer) request.headers.set('Authorization', `Bearer ${credentials.bearer}`);
      else if (credentials.basic) {
        request.headers.set(
          'Authorization',
          basicAuthorization(credentials.basic.clientId, credentials.basic.clientSecret),
        );
      }
      return request;
    },
  };
}

/**
 * A failed start (a 5xx, a timeout, a dropped connection) may still have stored the run, so every
 * start carries an Idempotency-Key: the caller's own when it gives one (reuse it to retry safely),
 * else a random UUID.
 */
export const idempotentStarts: Middleware = {
  onRequest({ request, schemaPath }) {
    if (
      request.method === 'POST' &&
      schemaPath === '/api/workflows/{workflow_id}/run' &&
      !request.headers.has('Idempotency-Key')
    ) {
      request.headers.set('Idempotency-Key', crypto.randomUUID());
    }
    return request;
  },
};

export function createApiClient(
  baseUrl: string,
  credentials: Credentials = {},
  options: Omit<ClientOptions, 'baseUrl'> = {},
): ApiClient {
  const client = createClient<paths>({ baseUrl, redirect: 'manual', ...options });
  if (credentials.bearer || credentials.basic) client.use(authMiddleware(credentials));
  client.use(idempotentStarts);
  return client;
}

/** Form body for the token and revocation endpoints (`application/x-www-form-urlencoded`). */
export const formBody = {
  bodySerializer: formEncode,
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
} as const;
