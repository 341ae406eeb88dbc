import type { Request } from 'express';

export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
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
export function basicCredentials(req: Request): BasicCredentials | null | undefined {
  const header = req.headers.authorization;
  if (!header || !/^Basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
}
