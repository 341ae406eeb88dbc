import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Server-side browser sessions of the platform pages: the signed cookie names a row here, so
// logout, a password change and the user's deletion end a session at once (a copied cookie stops
// working). id_hash is the SHA-256 of the session id; the id itself is only in the cookie.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('web_sessions', (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.string('id_hash', 64).primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.index(['user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('web_sessions');
}
