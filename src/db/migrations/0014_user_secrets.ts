import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Named per-user secrets: what an http_request node sends as `{{ secrets.NAME }}`.
// `value` is sealed with the key-encryption key (src/db/sealedSecrets.ts, bound to the row's id),
// never stored in clear. A name is unique per user; deleting the user deletes their secrets.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_secrets', (t) => {
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('id');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('name', 64).notNullable();
    t.text('value').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['user_id', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('user_secrets');
}
