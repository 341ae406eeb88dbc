import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { isUniqueViolation } from '../db/insert.ts';
import { METADATA_DOCUMENT_ID_PREFIX } from '../accounts/clientIds.ts';
import {
  createMetadataDocumentApp,
  deleteMetadataDocumentApp,
  listMetadataDocumentApps,
  refreshMetadataDocumentApp,
} from '../accounts/metadataDocumentApps.ts';
import { findClientByClientId, type OAuthClient } from './clients.ts';
import {
  fetchMetadataDocument,
  MAX_MAX_AGE_SECONDS,
  MetadataDocumentError,
  metadataDocumentUrl,
  type FetchedDocument,
} from './metadataDocument.ts';
import {
  findMetadataDocumentRow,
  insertMetadataDocumentRow,
  listMetadataDocumentRows,
  updateMetadataDocumentRow,
  type MetadataDocumentRow,
} from './metadataDocuments.store.ts';

// The cache of metadata-document clients: the authorize endpoint asks for the client of an https
// client_id, which is fetched when unknown or due (its max-age passed), kept otherwise. A failed
// refetch keeps the stored document until MAX_MAX_AGE_SECONDS after its last good fetch, then
// the client is refused until its document can be fetched again. The token endpoint reads the
// stored client only (accounts' findAppByClientId), never fetching.

export { MetadataDocumentError } from './metadataDocument.ts';

export const urlHashOf = (url: string): string => createHash('sha256').update(url).digest('hex');

async function store(ctx: AppContext, row: MetadataDocumentRow | undefined, fetched: FetchedDocument): Promise<void> {
  const { metadata } = fetched;
  const app = {
    url: metadata.clientId,
    name: metadata.clientName,
    homepage: metadata.clientUri ?? new URL(metadata.clientId).origin,
    redirectUris: metadata.redirectUris,
    clientMetadata: {
      client_name: metadata.clientName,
      ...(metadata.clientUri ? { client_uri: metadata.clientUri } : {}),
      ...(metadata.logoUri ? { logo_uri: metadata.logoUri } : {}),
    },
  };
  const fields = { document: JSON.stringify(metadata), fetched_at: ctx.now(), max_age_seconds: fetched.maxAgeSeconds };
  if (row) {
    await ctx.db.transaction(async (trx) => {
      await refreshMetadataDocumentApp({ db: trx }, row.application_id, app);
      await updateMetadataDocumentRow(trx, row.id, fields);
    });
    return;
  }
  try {
    await ctx.db.transaction(async (trx) => {
      const applicationId = await createMetadataDocumentApp({ db: trx }, app);
      await insertMetadataDocumentRow(trx, {
        url_hash: urlHashOf(metadata.clientId),
        url: metadata.clientId,
        application_id: applicationId,
        created_at: ctx.now(),
        ...fields,
      });
    });
  } catch (error) {
    // Two first authorizations of one client at once: the other stored it.
    if (!isUniqueViolation(error)) throw error;
  }
}

/**
 * The client of an https client_id: null when the operator allows no host (such a client_id is
 * then an unknown client); MetadataDocumentError when its URL is not acceptable, or its document
 * cannot be fetched or is not acceptable (and no stored one may stand in).
 */
export async function metadataDocumentClient(
  ctx: AppContext,
  clientId: string,
): Promise<(OAuthClient & { metadataDocumentHost: string }) | null> {
  const hosts = ctx.config.CLIENT_ID_METADATA_DOCUMENT_HOSTS;
  if (hosts.length === 0) return null;
  metadataDocumentUrl(clientId, hosts);
  const row = await findMetadataDocumentRow(ctx.db, urlHashOf(clientId));
  const now = ctx.now();
  if (!row || now >= row.fetched_at + row.max_age_seconds * 1000) {
    try {
      await store(ctx, row, await fetchMetadataDocument(ctx.config.WORKFLOW_HTTP_ALLOW_HOSTS, clientId));
    } catch (error) {
      const usable = row && now < row.fetched_at + MAX_MAX_AGE_SECONDS * 1000;
      if (!(error instanceof MetadataDocumentError) || !usable) throw error;
      ctx.logger.warn({ clientId, reason: error.message }, 'metadata document refetch failed; the stored one is used');
    }
  }
  const client = await findClientByClientId(ctx, clientId);
  // Known by its URL wherever the authorization request goes on (the consent form, the decision).
  return client && { ...client, clientId, metadataDocumentHost: new URL(clientId).hostname };
}

/**
 * The client_id a client knows itself by: for the id a metadata-document client is stored under
 * (`md_` and the base64url SHA-256 of its URL, the table's key in hex), its URL.
 */
export async function publicClientIdOf(ctx: Pick<AppContext, 'db'>, storedClientId: string): Promise<string> {
  if (!storedClientId.startsWith(METADATA_DOCUMENT_ID_PREFIX)) return storedClientId;
  const hash = Buffer.from(storedClientId.slice(METADATA_DOCUMENT_ID_PREFIX.length), 'base64url').toString('hex');
  return (await findMetadataDocumentRow(ctx.db, hash))?.url ?? storedClientId;
}

/** A cached metadata-document client, as the operator lists it. */
export interface CachedMetadataDocumentClient {
  applicationId: number;
  url: string;
  name: string;
  redirectUris: string[];
  fetchedAt: number;
  maxAgeSeconds: number;
  createdAt: number;
}

export async function listMetadataDocumentClients(
  ctx: Pick<AppContext, 'db'>,
): Promise<CachedMetadataDocumentClient[]> {
  const apps = new Map((await listMetadataDocumentApps(ctx)).map((app) => [app.id, app]));
  return (await listMetadataDocumentRows(ctx.db)).map((row) => {
    const document = JSON.parse(row.document) as { clientName: string; redirectUris: string[] };
    return {
      applicationId: row.application_id,
      url: row.url,
      name: apps.get(row.application_id)?.name ?? document.clientName,
      redirectUris: document.redirectUris,
      fetchedAt: Number(row.fetched_at),
      maxAgeSeconds: row.max_age_seconds,
      createdAt: Number(row.created_at),
    };
  });
}

/** Forgets a cached client (by its URL): its row, grants and tokens go; the next authorization fetches it anew. */
export async function forgetMetadataDocumentClient(ctx: Pick<AppContext, 'db'>, url: string): Promise<boolean> {
  const row = await findMetadataDocumentRow(ctx.db, urlHashOf(url));
  if (!row) return false;
  return deleteMetadataDocumentApp(ctx, row.application_id);
}
