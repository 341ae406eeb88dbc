import type { Knex } from 'knex';
import type { ApplicationRow } from './apps.store.ts';

// The applications rows of metadata-document clients (registration kind `metadata_document`):
// public clients without owner or secret, whose details are their fetched document's.

/** What a metadata document sets of its client's row. */
export interface MetadataDocumentAppFields {
  name: string;
  homepage: string;
  redirect_uri: string;
  redirect_uris: string;
  client_metadata: string;
}

export async function updateMetadataDocumentApp(
  db: Knex,
  id: number,
  fields: MetadataDocumentAppFields,
): Promise<void> {
  await db('applications').where({ id, registration_kind: 'metadata_document' }).update(fields);
}

export async function listMetadataDocumentAppRows(db: Knex): Promise<ApplicationRow[]> {
  return db<ApplicationRow>('applications').where({ registration_kind: 'metadata_document' }).orderBy('id');
}

/** Deletes the row, and with it (foreign keys) its grants, codes and tokens. */
export async function deleteMetadataDocumentAppRow(db: Knex, id: number): Promise<number> {
  return db('applications').where({ id, registration_kind: 'metadata_document' }).delete();
}
