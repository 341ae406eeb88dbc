import type { Knex } from 'knex';

// One schema for MySQL/MariaDB (mysql2) and PostgreSQL (pg). Portability rules:
// - every timestamp is a BIGINT of epoch milliseconds (the API renders ISO 8601);
// - JSON is stored as text (`longtext` on MySQL, `text` on PostgreSQL) and parsed by the code;
// - indexed varchars stay within 191 characters (utf8mb4 index limits on older MySQL);
// - token and secret columns hold SHA-256 hex digests (64 chars), never plaintext.

const HASH = 64;
const NAME = 64;
const PUBLIC_ID = 40;

export async function up(knex: Knex): Promise<void> {
  // Platform accounts. `login` is also the user's personal namespace (see `namespaces`).
  await knex.schema.createTable('users', (t) => {
    t.increments('id');
    t.string('login', NAME).notNullable().unique();
    t.string('name', 255).notNullable();
    t.string('avatar_url', 2048).notNullable().defaultTo('');
    t.string('password_hash', 255).notNullable(); // scrypt$N$r$p$salt$hash
    t.bigInteger('created_at').notNullable();
  });

  // Organizations; members reach them through `memberships`.
  await knex.schema.createTable('organizations', (t) => {
    t.increments('id');
    t.string('namespace', NAME).notNullable().unique();
    t.string('name', 255).notNullable();
    t.string('avatar_url', 2048).notNullable().defaultTo('');
    t.bigInteger('created_at').notNullable();
  });

  await knex.schema.createTable('memberships', (t) => {
    t.integer('org_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('role', 16).notNullable(); // 'owner' | 'member'
    t.bigInteger('created_at').notNullable();
    t.primary(['org_id', 'user_id']);
    t.index(['user_id']);
  });

  // One name space for user logins and org namespaces: exactly one of user_id / org_id is set.
  // The primary key is what makes a login and an org namespace unable to collide.
  await knex.schema.createTable('namespaces', (t) => {
    t.string('name', NAME).primary();
    t.integer('user_id').unsigned().nullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('org_id').unsigned().nullable().references('id').inTable('organizations').onDelete('CASCADE');
  });

  // Registered OAuth clients. The client secret is stored as a SHA-256 hash.
  await knex.schema.createTable('applications', (t) => {
    t.increments('id');
    t.string('client_id', NAME).notNullable().unique();
    t.string('client_secret_hash', HASH).notNullable();
    t.integer('owner_user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    t.text('description').notNullable();
    t.string('homepage', 2048).notNullable();
    t.string('redirect_uri', 2048).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('secret_rotated_at').nullable();
    t.index(['owner_user_id']);
  });

  // One row per grant (created when a code is issued). Revoking an app for a user sets
  // revoked_at on all of that pair's rows; tokens and proxy tokens check it on every use.
  await knex.schema.createTable('authorizations', (t) => {
    t.increments('id');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('application_id').unsigned().notNullable().references('id').inTable('applications').onDelete('CASCADE');
    t.string('scope', 255).notNullable(); // space-separated
    t.bigInteger('created_at').notNullable();
    t.bigInteger('revoked_at').nullable();
    t.index(['user_id', 'application_id']);
    t.index(['application_id']);
  });

  // Authorization codes (RFC 6749 4.1.2), single use: used_at is set on the first exchange.
  await knex.schema.createTable('oauth_codes', (t) => {
    t.increments('id');
    t.string('code_hash', HASH).notNullable().unique();
    t.integer('authorization_id').unsigned().notNullable().references('id').inTable('authorizations').onDelete('CASCADE');
    t.integer('application_id').unsigned().notNullable().references('id').inTable('applications').onDelete('CASCADE');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('redirect_uri', 2048).notNullable();
    t.string('scope', 255).notNullable();
    t.string('code_challenge', 128).nullable();
    t.string('code_challenge_method', 16).nullable(); // 'S256' | 'plain'
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('used_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.index(['authorization_id']);
  });

  // OAuth access + refresh token pairs. rotated_at: the refresh token was used (RFC 9700
  // 4.14.2: a second use revokes the grant). code_id ties tokens to the code that issued them.
  await knex.schema.createTable('oauth_tokens', (t) => {
    t.increments('id');
    t.integer('authorization_id').unsigned().notNullable().references('id').inTable('authorizations').onDelete('CASCADE');
    t.integer('code_id').unsigned().nullable().references('id').inTable('oauth_codes').onDelete('SET NULL');
    t.string('access_token_hash', HASH).notNullable().unique();
    t.bigInteger('access_expires_at').notNullable();
    t.string('refresh_token_hash', HASH).notNullable().unique();
    t.bigInteger('refresh_expires_at').notNullable();
    t.string('scope', 255).notNullable();
    t.bigInteger('rotated_at').nullable();
    t.bigInteger('revoked_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.index(['authorization_id']);
    t.index(['code_id']);
  });

  // Raw access tokens (API keys) a user creates in a namespace (their login or an org's).
  // permissions: JSON array such as ["workflows"]. token_prefix: first characters, for display.
  await knex.schema.createTable('access_tokens', (t) => {
    t.increments('id');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('namespace', NAME).notNullable().references('name').inTable('namespaces').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    t.string('usage_scenario', 16).notNullable(); // 'paid' | 'trial'
    t.text('permissions').notNullable();
    t.string('token_hash', HASH).notNullable().unique();
    t.string('token_prefix', 16).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
    t.index(['user_id', 'namespace']);
  });

  // JWT signing keys (JWK JSON). Retired keys stay published in the JWKS until tokens expire.
  await knex.schema.createTable('signing_keys', (t) => {
    t.string('kid', NAME).primary();
    t.string('alg', 16).notNullable();
    t.text('private_jwk').notNullable();
    t.text('public_jwk').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('retired_at').nullable();
  });

  // Secrets the service generates on first start (session key ...); see src/platform/secrets.ts.
  await knex.schema.createTable('app_secrets', (t) => {
    t.string('name', NAME).primary();
    t.text('value').notNullable();
    t.bigInteger('created_at').notNullable();
  });

  // Workflows. seq orders pages stably; id is the public string id. name_lower makes
  // case-insensitive search portable (PostgreSQL LIKE is case-sensitive, MySQL's is not).
  await knex.schema.createTable('workflows', (t) => {
    t.increments('seq');
    t.string('id', PUBLIC_ID).notNullable().unique();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('name_lower', 200).notNullable();
    t.text('description').notNullable();
    t.text('nodes', 'longtext').notNullable();
    t.text('edges', 'longtext').notNullable();
    t.integer('version').notNullable().defaultTo(1);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('deleted_at').nullable();
    t.index(['user_id', 'deleted_at', 'seq']);
  });

  // Runs of a workflow: inputs, the graph snapshot it ran, and the outcome (JSON text).
  // (user_id, workflow_id, idempotency_key) is unique so a retried POST cannot start two runs;
  // NULL keys never collide on either dialect.
  await knex.schema.createTable('runs', (t) => {
    t.increments('seq');
    t.string('id', PUBLIC_ID).notNullable().unique();
    t.string('workflow_id', PUBLIC_ID).notNullable().references('id').inTable('workflows').onDelete('CASCADE');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('status', 16).notNullable(); // queued | running | completed | failed | cancelled
    t.text('inputs', 'longtext').notNullable();
    t.text('graph', 'longtext').notNullable();
    t.text('output', 'longtext').nullable();
    t.text('error', 'longtext').nullable();
    t.string('idempotency_key', 191).nullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('started_at').nullable();
    t.bigInteger('finished_at').nullable();
    t.bigInteger('duration_ms').nullable();
    t.unique(['user_id', 'workflow_id', 'idempotency_key']);
    t.index(['workflow_id', 'seq']);
    t.index(['status']);
  });

  // Per-node log of a run; run_id is the run's public id (runs.id).
  await knex.schema.createTable('run_steps', (t) => {
    t.increments('id');
    t.string('run_id', PUBLIC_ID).notNullable().references('id').inTable('runs').onDelete('CASCADE');
    t.string('node_id', 191).notNullable();
    t.string('node_type', 64).notNullable();
    t.string('status', 16).notNullable();
    t.bigInteger('started_at').nullable();
    t.bigInteger('finished_at').nullable();
    t.text('input_preview').nullable();
    t.text('output_preview').nullable();
    t.text('usage').nullable(); // JSON {prompt_tokens, completion_tokens, ...}
    t.text('error').nullable(); // JSON {code, message}
    t.index(['run_id']);
  });

  // Fixed-window counters for a database-backed rate limit store shared by all API processes.
  await knex.schema.createTable('rate_limits', (t) => {
    t.string('key', 191).primary();
    t.integer('hits').notNullable();
    t.bigInteger('reset_at').notNullable();
  });
}

/** Also the tables 0004_exact_collations converts: every table there was then. */
export const TABLES_IN_CREATION_ORDER = [
  'users',
  'organizations',
  'memberships',
  'namespaces',
  'applications',
  'authorizations',
  'oauth_codes',
  'oauth_tokens',
  'access_tokens',
  'signing_keys',
  'app_secrets',
  'workflows',
  'runs',
  'run_steps',
  'rate_limits',
];

export async function down(knex: Knex): Promise<void> {
  for (const table of [...TABLES_IN_CREATION_ORDER].reverse()) {
    await knex.schema.dropTableIfExists(table);
  }
}
