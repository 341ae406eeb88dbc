import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Hooks of a workflow: trigger URLs that start its runs (POST /hooks/{token}), and
// callback URLs told of each run's end (Standard Webhooks), with one message per callback and run
// and a row per delivery attempt.
//
// A trigger's token is `wht_` + 43 base64url characters (256 random bits). `token_lookup` (the first
// 12 after the prefix) finds the row and is shown as its prefix; the hash of the whole token is
// compared in constant time after the lookup (src/hooks/triggers.ts). A callback's signing secret
// must be read back to sign: it is sealed with the key-encryption key, never stored in plaintext.

const PUBLIC_ID = 40;

/** Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL. */
function exact(knex: Knex, t: Knex.CreateTableBuilder): void {
  if (dialectOf(knex) === 'mysql') {
    t.charset('utf8mb4');
    t.collate('utf8mb4_bin');
  }
}

export const HOOK_TABLES = ['workflow_triggers', 'workflow_callbacks', 'callback_messages', 'callback_attempts'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workflow_triggers', (t) => {
    exact(knex, t);
    t.increments('seq');
    t.string('id', PUBLIC_ID).notNullable().unique();
    t.string('workflow_id', PUBLIC_ID).notNullable().references('id').inTable('workflows').onDelete('CASCADE');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('token_lookup', 16).notNullable().unique();
    t.string('token_hash', 64).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
    t.index(['workflow_id', 'seq']);
  });
  await knex.schema.createTable('workflow_callbacks', (t) => {
    exact(knex, t);
    t.increments('seq');
    t.string('id', PUBLIC_ID).notNullable().unique();
    t.string('workflow_id', PUBLIC_ID).notNullable().references('id').inTable('workflows').onDelete('CASCADE');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('url', 2048).notNullable();
    t.string('description', 200).notNullable();
    t.text('secret').notNullable(); // sealed (src/shared/sealing.ts)
    t.bigInteger('created_at').notNullable();
    t.index(['workflow_id', 'seq']);
  });
  // One message per callback and run: its id is the `webhook-id` every attempt repeats.
  await knex.schema.createTable('callback_messages', (t) => {
    exact(knex, t);
    t.increments('seq');
    t.string('id', PUBLIC_ID).notNullable().unique();
    t.string('callback_id', PUBLIC_ID).notNullable().references('id').inTable('workflow_callbacks').onDelete('CASCADE');
    t.string('run_id', PUBLIC_ID).notNullable().references('id').inTable('runs').onDelete('CASCADE');
    t.string('event_type', 32).notNullable();
    t.string('status', 16).notNullable(); // pending | delivered | failed
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.unique(['callback_id', 'run_id']);
    t.index(['status', 'created_at']);
  });
  await knex.schema.createTable('callback_attempts', (t) => {
    exact(knex, t);
    t.increments('seq');
    t.string('message_id', PUBLIC_ID).notNullable().references('id').inTable('callback_messages').onDelete('CASCADE');
    t.string('callback_id', PUBLIC_ID).notNullable();
    t.integer('attempt').notNullable();
    t.string('status', 16).notNullable(); // succeeded | failed
    t.integer('response_status').nullable();
    t.text('error').nullable();
    t.integer('duration_ms').notNullable();
    t.bigInteger('attempted_at').notNullable();
    t.index(['callback_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...HOOK_TABLES].reverse()) await knex.schema.dropTableIfExists(table);
}
