import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Two client secrets at once, as GitHub: generating a new one keeps the old one valid until it is
// deleted, so a deployment switches without downtime. Each secret is its own row (a SHA-256 hash,
// as before; the secret itself is never stored) with when it was made and last used. The one
// secret of each existing application moves here. `creation_nonce` makes the registration form
// one-time: a resubmitted form (back button, double click) finds the app it already created.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('client_secrets', (t) => {
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('id');
    t.integer('application_id').unsigned().notNullable().references('id').inTable('applications').onDelete('CASCADE');
    t.string('secret_hash', 64).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
    t.index(['application_id']);
  });
  await knex.raw(
    'insert into client_secrets (application_id, secret_hash, created_at) select id, client_secret_hash, coalesce(secret_rotated_at, created_at) from applications',
  );
  await knex.schema.alterTable('applications', (t) => {
    t.dropColumn('client_secret_hash');
    t.dropColumn('secret_rotated_at');
    t.string('creation_nonce', 64).nullable();
    t.unique(['owner_user_id', 'creation_nonce']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('applications', (t) => {
    t.dropUnique(['owner_user_id', 'creation_nonce']);
    t.dropColumn('creation_nonce');
    t.string('client_secret_hash', 64).nullable();
    t.bigInteger('secret_rotated_at').nullable();
  });
  // The newest secret stays; an app with none gets an unusable hash (no secret hashes to it).
  const secrets = await knex('client_secrets').orderBy('id').select('application_id', 'secret_hash', 'created_at');
  for (const s of secrets) await knex('applications').where({ id: s.application_id }).update({ client_secret_hash: s.secret_hash, secret_rotated_at: s.created_at });
  await knex('applications').whereNull('client_secret_hash').update({ client_secret_hash: '-' });
  await knex.schema.alterTable('applications', (t) => {
    t.string('client_secret_hash', 64).notNullable().alter();
  });
  await knex.schema.dropTableIfExists('client_secrets');
}
