import { createHash } from 'node:crypto';
import type { DbContext } from '../context.ts';
import { revocationLease } from '../shared/principalLease.ts';
import type { ApplicationRow as Application } from './apps.store.ts';
import {
  deleteMetadataDocumentAppRow,
  insertMetadataDocumentApp,
  listMetadataDocumentAppRows,
  updateMetadataDocumentApp,
} from './metadataDocumentApps.store.ts';

// Clients identified by a Client ID Metadata Document (an https URL as client_id; the OAuth
// provider fetches and checks the document, src/oauth/metadataDocuments.ts). Their row is an
// application like any other, so grants and tokens reference it; its stored client_id is derived
// from the URL, which may be far longer than the column.

/** The client_id column's value for a metadata-document URL: `md_` and the URL's base64url SHA-256. */
export function metadataDocumentStoredClientId(url: string): string {
  return `md_${createHash('sha256').update(url).digest('base64url')}`;
}

/**
 * The stored client_id a client_id sent on the wire names: an https URL is a metadata document's.
 * The derived `md_` ids are never taken from the wire (none names a row): the client is known by
 * its URL only, so it passes the operator's host check and its document's refetch.
 */
export function storedClientIdOf(clientId: string): string {
  if (clientId.startsWith('md_')) return '';
  return clientId.startsWith('https://') ? metadataDocumentStoredClientId(clientId) : clientId;
}

/** What the document says of the client. */
export interface MetadataDocumentAppInput {
  url: string;
  name: string;
  homepage: string;
  redirectUris: string[];
  clientMetadata: Record<string, unknown>;
}

function fieldsOf(input: MetadataDocumentAppInput) {
  return {
    name: input.name,
    homepage: input.homepage,
    redirect_uri: input.redirectUris[0] ?? '',
    redirect_uris: JSON.stringify(input.redirectUris),
    client_metadata: JSON.stringify({ ...input.clientMetadata, client_id_metadata_document: input.url }),
  };
}

/** Adds the client's row; its id. */
export async function createMetadataDocumentApp(ctx: DbContext, input: MetadataDocumentAppInput): Promise<number> {
  return insertMetadataDocumentApp(ctx.db, metadataDocumentStoredClientId(input.url), fieldsOf(input), Date.now());
}

/** A refetched document's details replace the row's. */
export async function refreshMetadataDocumentApp(
  ctx: DbContext,
  id: number,
  input: MetadataDocumentAppInput,
): Promise<void> {
  await updateMetadataDocumentApp(ctx.db, id, fieldsOf(input));
}

export async function listMetadataDocumentApps(ctx: DbContext): Promise<Application[]> {
  return listMetadataDocumentAppRows(ctx.db);
}

/** Forgets the client: its row goes, and with it every grant and token of it. False when there was none. */
export async function deleteMetadataDocumentApp(ctx: DbContext, id: number): Promise<boolean> {
  const deleted = await deleteMetadataDocumentAppRow(ctx.db, id);
  await revocationLease.settle();
  return deleted > 0;
}
