import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Immutable versions of a workflow (listWorkflowVersions, getWorkflowVersion,
// restoreWorkflowVersion, runWorkflow's `version`). Every create, update and restore of a workflow
// inserts one in the same transaction as the workflow's own write; none is ever updated. A
// version goes with its workflow's row: soft delete keeps both (the runs' history), the purge
// after DELETED_WORKFLOW_RETENTION_SECONDS removes both (FK cascade).
//
// The workflows that exist already get their current state as their one version: earlier states
// were never stored, so their history starts here.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workflow_versions', (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.string('workflow_id', 40).notNullable().references('id').inTable('workflows').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.string('name', 200).notNullable();
    t.string('name_lower', 200).notNullable();
    t.text('description').notNullable();
    t.text('nodes', 'longtext').notNullable();
    t.text('edges', 'longtext').notNullable();
    t.integer('restored_from').nullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['workflow_id', 'version']);
  });
  await knex.raw(
    `insert into workflow_versions (workflow_id, version, name, name_lower, description, nodes, edges, restored_from, created_at)
     select id, version, name, name_lower, description, nodes, edges, null, updated_at from workflows`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('workflow_versions');
}
