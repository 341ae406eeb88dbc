import type { Request } from 'express';
import { invalidClient, invalidRequest } from '../shared/errors.ts';

// Client credentials of the token and revocation endpoints (RFC 6749 2.3.1): HTTP Basic
// (client_secret_basic) or the form body (client_secret_post). Decoded here, in front of
// @node-oauth/oauth2-server: its Basic parsing (`basic-auth`) skips 2.3.1's form-decoding, and it
// silently prefers Basic when a request carries both methods.

export interface ClientCredentials {
  clientId: string;
  /** '' when the request names its client by client_id alone (a public client). */
  clientSecret: string;
  /**
   * A second authentication method beside HTTP Basic: a client_secret in the body, or a body
   * client_id naming another client (RFC 6749 2.3: one method per request). A body client_id equal
   * to Basic's is no second method (some libraries send it).
   */
  secondMethod: boolean;
}

/** application/x-www-form-urlencoded decoding; null when a percent-escape is malformed. */
function formDecode(value: string): string | null {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * HTTP Basic client credentials. RFC 6749 2.3.1: client_id and client_secret are form-urlencoded
 * before base64 (oauth4webapi encodes even `-` and `_`), so decode them. Undefined without Basic;
 * null when the header is malformed (no colon, or a bad percent-escape).
 */
export function basicCredentials(req: Request): { clientId: string; clientSecret: string } | null | undefined {
  const header = req.headers.authorization;
  if (!header || !/^Basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  return clientId === null || clientSecret === null ? null : { clientId, clientSecret };
}

/**
 * The request's client credentials, Basic first: invalid_request (400) when Basic is malformed (a
 * syntax error, not a failed authentication: RFC 6749 5.2), invalid_client when there are none. A
 * body client_id without client_secret is a public client's (clientSecret ''); whether the client
 * is public is for the caller to check.
 */
export function clientCredentials(req: Request): ClientCredentials {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const basic = basicCredentials(req);
  if (basic === null) throw invalidRequest('Invalid request: malformed HTTP Basic credentials (RFC 6749 2.3.1)');
  if (basic) {
    return {
      ...basic,
      secondMethod:
        body.client_secret !== undefined || (body.client_id !== undefined && body.client_id !== basic.clientId),
    };
  }
  if (typeof body.client_id !== 'string' || !body.client_id) throw invalidClient();
  // A public client sends its client_id alone (RFC 6749 2.1, 3.2.1): clientSecret ''.
  if (body.client_secret === undefined) return { clientId: body.client_id, clientSecret: '', secondMethod: false };
  if (typeof body.client_secret !== 'string' || !body.client_secret) throw invalidClient();
  return { clientId: body.client_id, clientSecret: body.client_secret, secondMethod: false };
}
