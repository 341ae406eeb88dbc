import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// The device authorization grant (RFC 8628, src/oauth/device.ts): one row per device
// authorization request, from the device's request to the token it is redeemed for.
// - Neither code is stored as such: `device_code_hash` is the SHA-256 of the device's secret (high
//   entropy), `user_code_hash` an HMAC-SHA-256 of the code the user types (normalised) under a
//   sealed service secret. Not unique: an expired row may share a user code with a live one; the
//   lookups take the live row.
// - `status`: pending -> approved | denied (the user's decision on /device, a conditional update:
//   one decision per code), approved -> used (the one redemption, a conditional update too, so
//   concurrent polls issue one pair). `user_id` and `auth_time` are the approving user's.
// - `interval_s` and `last_polled_at`: RFC 8628 3.5's polling interval, raised by 5 s on each
//   slow_down.

export const DEVICE_TABLES = ['device_authorizations'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('device_authorizations', (t) => {
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('id');
    t.string('device_code_hash', 64).notNullable().unique();
    t.string('user_code_hash', 64).notNullable();
    t.integer('application_id')
      .unsigned()
      .notNullable()
      .references('id')
      .inTable('applications')
      .onDelete('CASCADE');
    t.string('scope', 255).notNullable();
    t.string('status', 16).notNullable(); // 'pending' | 'approved' | 'denied' | 'used'
    t.integer('user_id').unsigned().nullable().references('id').inTable('users').onDelete('CASCADE');
    t.bigInteger('auth_time').nullable();
    t.integer('interval_s').notNullable();
    t.bigInteger('last_polled_at').nullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['user_code_hash', 'status']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('device_authorizations');
}
