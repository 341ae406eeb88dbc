import { allowListOf, OutboundError, outboundRequest } from '../outbound/index.ts';

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, adopted by the MCP
// authorization specification 2025-11-25): a client whose client_id is an https URL publishes its
// metadata at that URL; the server fetches it instead of a registration. What is accepted of it,
// and how it is fetched, is here, with no I/O but the fetch; caching is metadataDocuments.ts's.

/** Why a metadata document (or its URL) is refused; the authorize endpoint shows it on an error page. */
export class MetadataDocumentError extends Error {
  /** `url`: the client_id is no acceptable document URL; `fetch`: no document came; `invalid`: it did, unacceptable. */
  readonly kind: 'url' | 'fetch' | 'invalid';

  constructor(kind: 'url' | 'fetch' | 'invalid', message: string) {
    super(message);
    this.name = 'MetadataDocumentError';
    this.kind = kind;
  }
}

/** The draft suggests 5 KB: a document is a few fields. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
const FETCH_TIMEOUT_MS = 5000;
/** Cache-Control max-age is honoured within these bounds; a document without one is kept an hour. */
export const MIN_MAX_AGE_SECONDS = 300;
export const MAX_MAX_AGE_SECONDS = 86_400;
export const DEFAULT_MAX_AGE_SECONDS = 3600;

const GRANT_TYPES = new Set(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Members that only a client with a secret has: such a client cannot be a metadata-document one. */
const SECRET_MEMBERS = ['client_secret', 'client_secret_expires_at', 'jwks', 'jwks_uri'];

/** What the service keeps of a valid document. */
export interface ClientMetadata {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  clientUri: string | undefined;
  logoUri: string | undefined;
}

/** Whether client_id names a metadata document at all: an https URL. Anything else is an ordinary client id. */
export function looksLikeMetadataDocumentUrl(clientId: string): boolean {
  return clientId.startsWith('https://');
}

/**
 * The URL of a metadata-document client id (draft section 3): https, with a path, without a
 * fragment, credentials or dot segments, on a host the operator allows. The URL must be in its
 * canonical form (what the WHATWG parser gives back), so one client has one client_id.
 */
export function metadataDocumentUrl(clientId: string, allowedHosts: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new MetadataDocumentError('url', 'the client_id is not a URL.');
  }
  if (url.protocol !== 'https:') throw new MetadataDocumentError('url', 'the client_id URL must use https.');
  if (url.username || url.password || clientId.includes('@'))
    throw new MetadataDocumentError('url', 'the client_id URL must not carry a user name or password.');
  if (url.hash || clientId.includes('#'))
    throw new MetadataDocumentError('url', 'the client_id URL must not have a fragment.');
  if (/\/\.\.?(\/|$)/.test(clientId) || /%2e/i.test(url.pathname))
    throw new MetadataDocumentError('url', 'the client_id URL must not contain . or .. path segments.');
  if (url.pathname === '/') throw new MetadataDocumentError('url', 'the client_id URL must have a path.');
  if (url.href !== clientId)
    throw new MetadataDocumentError('url', `the client_id URL is not in its canonical form (${url.href}).`);
  if (!allowedHosts.includes(url.hostname))
    throw new MetadataDocumentError(
      'url',
      `${url.hostname} is not a host this service accepts client metadata documents from.`,
    );
  return url;
}

/** A redirect URI as registration accepts it: https, loopback http (RFC 8252 7.3), or a private-use scheme (7.1). */
export function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return 'is not a URL string';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (value.includes('#')) return 'has a fragment';
  if (url.username || url.password || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value)) return 'carries credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.has(url.hostname) ? null : 'uses http on a non-loopback host';
  // RFC 8252 7.1: a private-use scheme is a reverse domain name (it has a dot).
  const scheme = url.protocol.slice(0, -1);
  if (scheme.includes('.') && !['javascript', 'data', 'file', 'vbscript'].includes(scheme)) return null;
  return `uses the scheme ${scheme}: (https, loopback http or a reverse-domain private-use scheme)`;
}

function optionalUrl(document: Record<string, unknown>, name: string): string | undefined {
  const value = document[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^https:\/\/[^\s]+$/.test(value) || value.length > 2048)
    throw new MetadataDocumentError('invalid', `${name} must be an https URL.`);
  return value;
}

function checkAuthentication(document: Record<string, unknown>): void {
  const method = document.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none')
    throw new MetadataDocumentError(
      'invalid',
      `token_endpoint_auth_method must be none (a metadata-document client has no secret), not ${JSON.stringify(method)}.`,
    );
  const secret = SECRET_MEMBERS.find((name) => document[name] !== undefined);
  if (secret)
    throw new MetadataDocumentError('invalid', `${secret} is not allowed: a metadata-document client has no secret.`);
}

function checkTypes(document: Record<string, unknown>): void {
  const grants = document.grant_types;
  if (grants !== undefined && (!Array.isArray(grants) || grants.some((g) => !GRANT_TYPES.has(g as string))))
    throw new MetadataDocumentError('invalid', `grant_types may list only ${[...GRANT_TYPES].join(', ')}.`);
  const responses = document.response_types;
  if (responses !== undefined && (!Array.isArray(responses) || responses.some((r) => r !== 'code')))
    throw new MetadataDocumentError('invalid', 'response_types may list only code.');
}

/** The document's metadata, when it is one this service accepts for `clientId`. */
export function parseMetadataDocument(clientId: string, body: Buffer): ClientMetadata {
  let document: unknown;
  try {
    document = JSON.parse(body.toString('utf8'));
  } catch {
    throw new MetadataDocumentError('invalid', 'the document is not JSON.');
  }
  if (!document || typeof document !== 'object' || Array.isArray(document))
    throw new MetadataDocumentError('invalid', 'the document is not a JSON object.');
  const doc = document as Record<string, unknown>;
  if (doc.client_id !== clientId)
    throw new MetadataDocumentError('invalid', "the document's client_id is not the URL it was fetched from.");
  checkAuthentication(doc);
  checkTypes(doc);
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 20)
    throw new MetadataDocumentError('invalid', 'redirect_uris must be a list of 1 to 20 URLs.');
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new MetadataDocumentError('invalid', `the redirect URI ${JSON.stringify(uri)} ${problem}.`);
  }
  const name = doc.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim().length === 0 || name.length > 100))
    throw new MetadataDocumentError('invalid', 'client_name must be 1-100 characters.');
  return {
    clientId,
    clientName: typeof name === 'string' ? name.trim() : new URL(clientId).hostname,
    redirectUris: uris as string[],
    clientUri: optionalUrl(doc, 'client_uri'),
    logoUri: optionalUrl(doc, 'logo_uri'),
  };
}

/** How long a fetched document is used: its Cache-Control max-age, within [5 minutes, 24 hours]. */
export function maxAgeOf(cacheControl: string | undefined): number {
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(?:,|$)/i.exec(cacheControl ?? '');
  const seconds = match ? Number(match[1]) : DEFAULT_MAX_AGE_SECONDS;
  return Math.min(MAX_MAX_AGE_SECONDS, Math.max(MIN_MAX_AGE_SECONDS, seconds));
}

export interface FetchedDocument {
  metadata: ClientMetadata;
  maxAgeSeconds: number;
}

/**
 * GETs the document through the outbound guard (the operator's WORKFLOW_HTTP_ALLOW_HOSTS apply, as
 * to every outbound request the service makes for others): bounded in time and size, no redirect
 * followed (the document must be at its client_id).
 */
export async function fetchMetadataDocument(allowHosts: readonly string[], clientId: string): Promise<FetchedDocument> {
  let response;
  try {
    response = await outboundRequest(
      { allow: allowListOf(allowHosts) },
      {
        method: 'GET',
        url: clientId,
        headers: { accept: 'application/json' },
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: MAX_DOCUMENT_BYTES,
        maxRedirects: 0,
      },
    );
  } catch (error) {
    if (error instanceof OutboundError) throw new MetadataDocumentError('fetch', error.message);
    throw error;
  }
  if (response.status >= 300 && response.status < 400)
    throw new MetadataDocumentError(
      'fetch',
      `its URL answered a redirect (HTTP ${response.status}), which is not followed.`,
    );
  if (response.status !== 200) throw new MetadataDocumentError('fetch', `its URL answered HTTP ${response.status}.`);
  const cacheControl = response.headers['cache-control'];
  return {
    metadata: parseMetadataDocument(clientId, response.body),
    maxAgeSeconds: maxAgeOf(Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl),
  };
}
