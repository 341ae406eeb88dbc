import type { Knex } from 'knex';

// Each workflow version's size in bytes (name, description, nodes and edges as stored), written
// once with the version (versions are immutable), so a user's stored bytes (USER_MAX_STORED_BYTES,
// src/workflows/quotas.ts) are a sum of small integers. Summing the texts' lengths on every write
// read the texts themselves on MySQL: 0.5-1.1 s for one user's 50 MB. The index on (workflow_id,
// bytes) covers the sum, so it reads no version's text at all. Existing versions are measured here.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_versions', (t) => {
    t.bigInteger('bytes').notNullable().defaultTo(0);
    t.index(['workflow_id', 'bytes'], 'workflow_versions_bytes');
  });
  // octet_length is standard SQL: the same statement on PostgreSQL, MySQL and MariaDB.
  await knex.raw('update workflow_versions set bytes = octet_length(name) + octet_length(description) + octet_length(nodes) + octet_length(edges)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_versions', (t) => {
    t.dropIndex(['workflow_id', 'bytes'], 'workflow_versions_bytes');
    t.dropColumn('bytes');
  });
}
