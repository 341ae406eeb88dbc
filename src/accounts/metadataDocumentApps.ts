import type { DbContext } from '../context.ts';
import { revocationLease } from '../shared/principalLease.ts';
import type { ApplicationRow as Application } from './apps.store.ts';
import { createRegisteredApp } from './apps.ts';
import { metadataDocumentStoredClientId } from './clientIds.ts';
import {
  deleteMetadataDocumentAppRow,
  listMetadataDocumentAppRows,
  updateMetadataDocumentApp,
} from './metadataDocumentApps.store.ts';

// Clients identified by a Client ID Metadata Document (an https URL as client_id; the OAuth
// provider fetches and checks the document, src/oauth/metadataDocuments.ts). Their row is an
// application like any other, so grants and tokens reference it; its stored client_id is derived
// from the URL, which may be far longer than the column.

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

/** Adds the client's row (a public client, PKCE required); its id. */
export async function createMetadataDocumentApp(ctx: DbContext, input: MetadataDocumentAppInput): Promise<number> {
  const { app } = await createRegisteredApp(ctx, {
    kind: 'metadata_document',
    clientId: metadataDocumentStoredClientId(input.url),
    name: input.name,
    homepage: input.homepage,
    redirectUris: input.redirectUris,
    tokenEndpointAuthMethod: 'none',
    idTokenAlg: 'RS256',
    metadata: JSON.parse(fieldsOf(input).client_metadata) as Record<string, unknown>,
    registrationAccessTokenHash: null,
  });
  return app.id;
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
