/**
 * Typed client for the service, generated from openapi.yaml (openapi-fetch over generated/api.d.ts).
 *
 *   const api = createApiClient('http://localhost:3000', { bearer: apiKey });
 *   const { data, error } = await api.GET('/api/workflows', { params: { query: { per_page: 50 } } });
 */
import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/api.d.ts';

export type { components, operations, paths };
export type ApiClient = Client<paths>;
export type Schemas = components['schemas'];

export interface Credentials {
  /** An OAuth access token, a proxy token or an API key, sent as `Authorization: Bearer ...`. */
  bearer?: string;
  /** Application credentials for the token endpoint, sent as HTTP Basic. */
  basic?: { clientId: string; clientSecret: string };
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
        request.headers.set('Authorization', basicAuthorization(credentials.basic.clientId, credentials.basic.clientSecret));
      }
      return request;
    },
  };
}

export function createApiClient(baseUrl: string, credentials: Credentials = {}, options: Omit<ClientOptions, 'baseUrl'> = {}): ApiClient {
  const client = createClient<paths>({ baseUrl, redirect: 'manual', ...options });
  if (credentials.bearer || credentials.basic) client.use(authMiddleware(credentials));
  return client;
}

/** Form body for the token and revocation endpoints (`application/x-www-form-urlencoded`). */
export const formBody = {
  bodySerializer: (body: Record<string, string | undefined>) => {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) if (v !== undefined) form.set(k, v);
    return form.toString();
  },
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
} as const;
