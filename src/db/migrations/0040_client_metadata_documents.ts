import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Client ID Metadata Documents: a client whose client_id is an https URL, whose metadata the
// service fetched from that URL. It is an `applications` row like any client (so its grants and
// tokens reference it and die with it), of registration kind `metadata_document`, under an
// internal client_id; this table maps the URL to it and keeps the document.
// - `url_hash`: SHA-256 hex of the URL, the key (a URL may be 2048 characters: too long for a
//   unique index on MySQL). `url` itself is kept to show and to check against.
// - `document`: what was accepted of the document, as JSON (name, redirect URIs, links).
// - `fetched_at`: when it was last fetched and accepted; `max_age_seconds`: how long it is used
//   from then (its Cache-Control max-age within bounds) before it is fetched again.

export const METADATA_DOCUMENT_TABLES = ['client_metadata_documents'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('client_metadata_documents', (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('id');
    t.string('url_hash', 64).notNullable().unique();
    t.string('url', 2048).notNullable();
    t.integer('application_id')
      .unsigned()
      .notNullable()
      .unique()
      .references('id')
      .inTable('applications')
      .onDelete('CASCADE');
    t.text('document').notNullable();
    t.bigInteger('fetched_at').notNullable();
    t.integer('max_age_seconds').notNullable();
    t.bigInteger('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('client_metadata_documents');
}
