import type { Knex } from 'knex';

// What the storage quotas read on every workflow write and every run purge (docs/operating.md "Storage
// quotas"), made cheap:
// - each workflow version's size in bytes (name, description, nodes and edges as stored), written
//   once with the version (versions are immutable), so a user's stored bytes
//   (USER_MAX_STORED_BYTES, src/workflows/quotas.ts) are a sum of small integers. Summing the
//   texts' lengths read the texts themselves on MySQL: 0.4-1.1 s for one user's 50 MB. The index
//   on (workflow_id, bytes) covers the sum. Existing versions are measured here.
// - runs by (status, finished_at) for the purge by age (RUN_RETENTION_DAYS) and by (user_id,
//   status, seq) for the purge by count (USER_MAX_STORED_RUNS, src/runs/retention.ts): both read
//   an index instead of every run's row.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_versions', (t) => {
    t.bigInteger('bytes').notNullable().defaultTo(0);
    t.index(['workflow_id', 'bytes'], 'workflow_versions_bytes');
  });
  // octet_length is standard SQL: the same statement on PostgreSQL, MySQL and MariaDB.
  await knex.raw('update workflow_versions set bytes = octet_length(name) + octet_length(description) + octet_length(nodes) + octet_length(edges)');
  await knex.schema.alterTable('runs', (t) => {
    t.index(['status', 'finished_at'], 'runs_status_finished');
    t.index(['user_id', 'status', 'seq'], 'runs_user_status_seq');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropIndex(['status', 'finished_at'], 'runs_status_finished');
    t.dropIndex(['user_id', 'status', 'seq'], 'runs_user_status_seq');
  });
  await knex.schema.alterTable('workflow_versions', (t) => {
    t.dropIndex(['workflow_id', 'bytes'], 'workflow_versions_bytes');
    t.dropColumn('bytes');
  });
}
