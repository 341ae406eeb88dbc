import { createHash } from 'node:crypto';

// The client_id a client is stored under. A Client ID Metadata Document's client is known on the
// wire by its URL, which may be far longer than the client_id column: it is stored under an id
// derived from the URL (metadataDocumentApps.ts).

/** The client_id column's value for a metadata-document URL: `md_` and the URL's base64url SHA-256. */
export function metadataDocumentStoredClientId(url: string): string {
  return `${METADATA_DOCUMENT_ID_PREFIX}${createHash('sha256').update(url).digest('base64url')}`;
}

/** The prefix of those derived ids; the authorization endpoint takes none (it takes the URL). */
export const METADATA_DOCUMENT_ID_PREFIX = 'md_';

/** The stored client_id a client_id names: an https URL is a metadata document's. */
export function storedClientIdOf(clientId: string): string {
  return clientId.startsWith('https://') ? metadataDocumentStoredClientId(clientId) : clientId;
}
