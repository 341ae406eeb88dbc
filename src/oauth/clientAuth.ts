import type { Request } from 'express';
import { invalidClient } from '../shared/errors.ts';

// Client credentials of the token and revocation endpoints (RFC 6749 2.3.1): HTTP Basic
// (client_secret_basic) or the form body (client_secret_post).

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** The client tried HTTP Basic: a refusal then carries a Basic challenge (RFC 6749 5.2). */
  usedBasic: boolean;
  /** Credentials in the form body as well as in the Authorization header. */
  alsoInBody: boolean;
  /**
   * A second authentication method beside HTTP Basic: a client_secret in the body, or a body
   * client_id naming another client (RFC 6749 2.3: one method per request). A body client_id equal
   * to Basic's is no second method (some libraries send it).
   */
  secondMethod: boolean;
}

function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

/**
 * HTTP Basic client credentials. RFC 6749 2.3.1: client_id and client_secret are form-urlencoded
 * before base64 (oauth4webapi encodes even `-` and `_`), so decode them. Undefined without Basic;
 * null when the header is malformed.
 */
export function basicCredentials(req: Request): { clientId: string; clientSecret: string } | null | undefined {
  const header = req.headers.authorization;
  if (!header || !/^Basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
}

/** The request's client credentials, Basic first; invalid_client when there are none or Basic is malformed. */
export function clientCredentials(req: Request): ClientCredentials {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const basic = basicCredentials(req);
  if (basic === null) throw invalidClient(true);
  if (basic) {
    return {
      ...basic,
      usedBasic: true,
      alsoInBody: body.client_id !== undefined || body.client_secret !== undefined,
      secondMethod: body.client_secret !== undefined || (body.client_id !== undefined && body.client_id !== basic.clientId),
    };
  }
  if (typeof body.client_id !== 'string' || typeof body.client_secret !== 'string' || !body.client_id || !body.client_secret) {
    throw invalidClient(false);
  }
  return { clientId: body.client_id, clientSecret: body.client_secret, usedBasic: false, alsoInBody: false, secondMethod: false };
}
