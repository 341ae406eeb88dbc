import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { insertReturningId } from './insert.ts';
import { migrateRollback, migrateUp } from './migrate.ts';

// Migration 0038 (public and self-registered clients) on each store: the applications registered
// before it are confidential console applications; a client without an owner can be stored after
// it, and a rollback drops such clients (the older schema requires an owner) and keeps the rest.

describe.each(testDialects())('migration 0038 on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect, { migrate: false });
    // Every migration before 0038, one batch each, so that a rollback undoes 0038 alone.
    for (let applied = await migrateUp(t.db); applied[0] !== '0037_workflow_mcp_tools';)
      applied = await migrateUp(t.db);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('makes earlier applications confidential console ones, stores ownerless clients, and drops them on rollback', async () => {
    const owner_user_id = await insertReturningId(t.db, 'users', {
      login: 'm38',
      name: 'M',
      password_hash: 'x',
      created_at: 1,
    });
    const app = (client_id: string, owner: number | null) => ({
      client_id,
      owner_user_id: owner,
      name: 'A',
      description: '',
      homepage: 'https://a.example',
      redirect_uri: 'https://a.example/cb',
      created_at: 2000,
    });
    await t.db('applications').insert(app('app_before', owner_user_id));
    expect(await migrateUp(t.db)).toEqual(['0038_dynamic_client_registration']);
    expect(
      await t
        .db('applications')
        .where({ client_id: 'app_before' })
        .first('token_endpoint_auth_method', 'registration_kind'),
    ).toEqual({ token_endpoint_auth_method: 'client_secret_basic', registration_kind: 'console' });
    await t.db('applications').insert({
      ...app('app_dynamic', null),
      token_endpoint_auth_method: 'none',
      registration_kind: 'dynamic',
      redirect_uris: JSON.stringify(['https://a.example/cb', 'http://127.0.0.1/cb']),
    });
    expect(await migrateRollback(t.db)).toEqual(['0038_dynamic_client_registration']);
    expect(
      (await t.db('applications').whereIn('client_id', ['app_before', 'app_dynamic']).pluck('client_id')).sort(),
    ).toEqual(['app_before']);
    expect(await migrateUp(t.db)).toEqual(['0038_dynamic_client_registration']);
  });
});
