import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// A callback whose deliveries keep failing is paused until its owner re-enables it (Svix and
// Stripe disable such endpoints too): its state, when and why it was paused, and the streak of
// failed attempts that decides it (src/hooks/deliveries.ts); and an index of the callbacks by user.

const TABLE = 'workflow_callbacks';
const INDEX = 'workflow_callbacks_user_id_index';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.string('status', 16).notNullable().defaultTo('active'); // active | paused
    t.bigInteger('paused_at').nullable();
    t.string('disabled_reason', 500).nullable();
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.bigInteger('failing_since').nullable();
    // The delivery loop reads a user's callbacks while that user is at their limit. MySQL indexes
    // the user_id foreign key already (and would take this index for it); PostgreSQL does not.
    if (dialectOf(knex) === 'pg') t.index(['user_id'], INDEX);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    if (dialectOf(knex) === 'pg') t.dropIndex(['user_id'], INDEX);
    t.dropColumn('failing_since');
    t.dropColumn('consecutive_failures');
    t.dropColumn('disabled_reason');
    t.dropColumn('paused_at');
    t.dropColumn('status');
  });
}
