import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

/** A metadata-document client's cached document (migration 0040). */
export interface MetadataDocumentRow {
  id: number;
  url_hash: string;
  url: string;
  application_id: number;
  /** JSON of ClientMetadata. */
  document: string;
  fetched_at: number;
  max_age_seconds: number;
  created_at: number;
}

const TABLE = 'client_metadata_documents';

export async function findMetadataDocumentRow(db: Knex, urlHash: string): Promise<MetadataDocumentRow | undefined> {
  return db<MetadataDocumentRow>(TABLE).where({ url_hash: urlHash }).first();
}

export async function findMetadataDocumentRowOfApp(
  db: Knex,
  applicationId: number,
): Promise<MetadataDocumentRow | undefined> {
  return db<MetadataDocumentRow>(TABLE).where({ application_id: applicationId }).first();
}

export async function insertMetadataDocumentRow(db: Knex, row: Omit<MetadataDocumentRow, 'id'>): Promise<number> {
  return insertReturningId(db, TABLE, row);
}

/** A fresh fetch accepted: the document and when it is next due. */
export async function updateMetadataDocumentRow(
  db: Knex,
  id: number,
  fields: Pick<MetadataDocumentRow, 'document' | 'fetched_at' | 'max_age_seconds'>,
): Promise<void> {
  await db(TABLE).where({ id }).update(fields);
}

/** Sets when the document was fetched (tests move a document's age this way, not by waiting). */
export async function setMetadataDocumentFetchedAt(db: Knex, url_hash: string, fetchedAt: number): Promise<void> {
  await db(TABLE).where({ url_hash }).update({ fetched_at: fetchedAt });
}

export async function listMetadataDocumentRows(db: Knex): Promise<MetadataDocumentRow[]> {
  return db<MetadataDocumentRow>(TABLE).orderBy('id');
}
