import type { Knex } from 'knex';

// A callback whose deliveries keep failing is paused until its owner re-enables it (Svix and
// Stripe disable such endpoints too): its state, when and why it was paused, and the streak of
// failed attempts that decides it (src/hooks/deliveries.ts).

const TABLE = 'workflow_callbacks';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.string('status', 16).notNullable().defaultTo('active'); // active | paused
    t.bigInteger('paused_at').nullable();
    t.string('disabled_reason', 500).nullable();
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.bigInteger('failing_since').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.dropColumn('failing_since');
    t.dropColumn('consecutive_failures');
    t.dropColumn('disabled_reason');
    t.dropColumn('paused_at');
    t.dropColumn('status');
  });
}
