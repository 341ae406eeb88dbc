import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { insertReturningId } from './insert.ts';
import { migrateLatest, migrateRollback, migrateUp } from './migrate.ts';
import { TABLES_IN_CREATION_ORDER } from './migrations/0001_initial.ts';
import { HOOK_TABLES } from './migrations/0013_workflow_hooks.ts';
import { BUDGET_TABLES } from './migrations/0033_budgets.ts';
import { DEVICE_TABLES } from './migrations/0034_device_authorizations.ts';
import { DPOP_TABLES } from './migrations/0035_dpop.ts';
import { PUSHED_REQUEST_TABLES } from './migrations/0036_pushed_authorization_requests.ts';
import { METADATA_DOCUMENT_TABLES } from './migrations/0040_client_metadata_documents.ts';
import { CLIENT_REGISTRATION_TABLES } from './migrations/0038_dynamic_client_registration.ts';
import { versionBytes } from '../workflows/versions.store.ts';

// The tables of 0001_initial, then of later migrations.
const TABLES = [
  ...TABLES_IN_CREATION_ORDER,
  'web_sessions',
  'client_secrets',
  'run_events',
  'workflow_versions',
  ...HOOK_TABLES,
  'workflow_schedules',
  ...BUDGET_TABLES,
  ...DEVICE_TABLES,
  ...DPOP_TABLES,
  ...PUSHED_REQUEST_TABLES,
  ...METADATA_DOCUMENT_TABLES,
  ...CLIENT_REGISTRATION_TABLES,
];

const ALL = [
  '0001_initial',
  '0002_run_logs_whole',
  '0003_seal_secrets',
  '0004_exact_collations',
  '0005_web_sessions',
  '0006_client_secrets',
  '0007_access_token_expiry',
  '0008_run_events',
  '0009_token_successors',
  '0010_access_scope',
  '0011_chain_revocation',
  '0012_workflow_versions',
  '0013_workflow_hooks',
  '0014_user_secrets',
  '0016_workflow_schedules',
  '0017_step_output_json',
  '0019_step_attempts',
  '0020_oidc_codes',
  '0021_id_token_alg',
  '0022_storage_quotas',
  '0023_callback_pausing',
  '0024_pkce_required',
  '0025_refresh_successor_pairs',
  '0026_tokens_without_authorization',
  '0027_trigger_reading',
  '0028_run_steps_keyset',
  '0029_run_retries',
  '0030_approval',
  '0031_run_trace_context',
  '0032_run_costs',
  '0033_budgets',
  '0034_device_authorizations',
  '0035_dpop',
  '0036_pushed_authorization_requests',
  '0037_workflow_mcp_tools',
  '0038_dynamic_client_registration',
  '0039_token_audience',
  '0040_client_metadata_documents',
  '0041_step_chosen_case',
];

describe.each(testDialects())('migrations on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect, { migrate: false });
  });
  afterAll(async () => {
    await t?.destroy();
  });

  /** The migrations knex has recorded as applied, in order. */
  const appliedMigrations = async (): Promise<string[]> =>
    (await t.db('knex_migrations').orderBy('id')).map((m: { name: string }) => m.name);

  async function existingTables(): Promise<string[]> {
    const found: string[] = [];
    for (const table of TABLES) if (await t.db.schema.hasTable(table)) found.push(table);
    return found;
  }

  it('creates every table on latest, and a second latest applies nothing', async () => {
    expect(await migrateLatest(t.db)).toEqual(ALL);
    expect(await existingTables()).toEqual(TABLES);
    expect(await migrateLatest(t.db)).toEqual([]);
    expect(await appliedMigrations()).toEqual(ALL);
  });

  it('stores epoch-millisecond BIGINTs and reads them back as numbers', async () => {
    const now = Date.now();
    await t.db('app_secrets').insert({ name: 'probe', value: 'x', created_at: now });
    const row = await t.db('app_secrets').where({ name: 'probe' }).first();
    expect(row.created_at).toBe(now);
    await t.db('app_secrets').where({ name: 'probe' }).delete();
  });

  it('keeps a run idempotency key unique per user and workflow, while NULL keys never collide', async () => {
    const now = Date.now();
    const user_id = await insertReturningId(t.db, 'users', {
      login: 'idem',
      name: 'I',
      password_hash: 'x',
      created_at: now,
    });
    await t.db('workflows').insert({
      id: 'wf_1',
      user_id,
      name: 'W',
      name_lower: 'w',
      description: '',
      nodes: '[]',
      edges: '[]',
      created_at: now,
      updated_at: now,
    });
    const run = (id: string, key: string | null) => ({
      id,
      workflow_id: 'wf_1',
      user_id,
      status: 'queued',
      inputs: '{}',
      graph: '{}',
      idempotency_key: key,
      created_at: now,
    });
    await t.db('runs').insert([run('r1', null), run('r2', null), run('r3', 'k')]);
    await expect(t.db('runs').insert(run('r4', 'k'))).rejects.toThrow();
    await t.db('users').where({ id: user_id }).delete();
    expect(await t.db('runs').count({ n: '*' }).first()).toMatchObject({ n: 0 });
  });

  it('compares every text column exactly: case, accents and distinct emoji are different keys', async () => {
    if (dialect === 'mysql') {
      // The test database has the server's usual case-insensitive default (test/support/db.ts).
      const [columns] = (await t.db.raw(
        `select table_name as t, column_name as c, collation_name as k from information_schema.columns
          where table_schema = database() and collation_name is not null and table_name not in ('knex_migrations', 'knex_migrations_lock')`,
      )) as [Array<{ t: string; c: string; k: string }>];
      expect(columns.length).toBeGreaterThan(40);
      expect(columns.filter((col) => col.k !== 'utf8mb4_bin').map((col) => `${col.t}.${col.c} ${col.k}`)).toEqual([]);
    }
    const now = Date.now();
    for (const name of ['abc-1', 'ABC-1', 'e', 'é', '🎉', '😀']) await t.db('namespaces').insert({ name });
    expect(await t.db('namespaces').where({ name: 'ABC-1' }).select('name')).toEqual([{ name: 'ABC-1' }]);
    expect(await t.db('namespaces').where({ name: '🎉' }).select('name')).toEqual([{ name: '🎉' }]);
    expect(await t.db('namespaces').where({ name: 'E' }).select('name')).toEqual([]);
    await t.db('namespaces').whereIn('name', ['abc-1', 'ABC-1', 'e', 'é', '🎉', '😀']).delete();
    await t.db('app_secrets').insert({ name: 'Probe', value: 'x', created_at: now });
    expect(await t.db('app_secrets').whereRaw('name like ?', ['prob%']).select('name')).toEqual([]);
    await t.db('app_secrets').where({ name: 'Probe' }).delete();
  });

  it('rolls everything back, leaving no table behind, and applies again afterwards', async () => {
    expect(await migrateRollback(t.db, { all: true })).toEqual([...ALL].reverse());
    expect(await existingTables()).toEqual([]);
    expect(await appliedMigrations()).toEqual([]);
    expect(await migrateLatest(t.db)).toEqual(ALL);
    expect(await existingTables()).toEqual(TABLES);
  });

  it('0006 moves the client secret hash of each app to client_secrets, and back on rollback', async () => {
    expect(await migrateRollback(t.db, { all: true })).toEqual([...ALL].reverse());
    for (const name of ALL.slice(0, ALL.indexOf('0006_client_secrets'))) expect(await migrateUp(t.db)).toEqual([name]);
    const owner_user_id = await insertReturningId(t.db, 'users', {
      login: 'm6',
      name: 'M',
      password_hash: 'x',
      created_at: 1000,
    });
    const app = (client_id: string, hash: string, rotated: number | null) => ({
      client_id,
      client_secret_hash: hash,
      owner_user_id,
      name: 'A',
      description: '',
      homepage: 'https://a.example',
      redirect_uri: 'https://a.example/cb',
      created_at: 2000,
      secret_rotated_at: rotated,
    });
    const a = await insertReturningId(t.db, 'applications', app('app_a', 'a'.repeat(64), null));
    const b = await insertReturningId(t.db, 'applications', app('app_b', 'b'.repeat(64), 3000));

    expect(await migrateUp(t.db)).toEqual(['0006_client_secrets']);
    const moved = await t
      .db('client_secrets')
      .orderBy('application_id')
      .select('application_id', 'secret_hash', 'created_at', 'last_used_at');
    expect(moved).toEqual([
      { application_id: a, secret_hash: 'a'.repeat(64), created_at: 2000, last_used_at: null },
      { application_id: b, secret_hash: 'b'.repeat(64), created_at: 3000, last_used_at: null },
    ]);
    expect(await t.db.schema.hasColumn('applications', 'client_secret_hash')).toBe(false);

    // Down keeps the newest secret of each app.
    await t
      .db('client_secrets')
      .insert({ application_id: a, secret_hash: 'c'.repeat(64), created_at: 4000, last_used_at: null });
    expect(await migrateRollback(t.db)).toEqual(['0006_client_secrets']);
    expect(await t.db('applications').orderBy('id').pluck('client_secret_hash')).toEqual([
      'c'.repeat(64),
      'b'.repeat(64),
    ]);
    await t.db('users').where({ id: owner_user_id }).delete();
    expect(await migrateLatest(t.db)).toEqual(ALL.slice(ALL.indexOf('0006_client_secrets')));
  });

  it('0012 gives each existing workflow, deleted ones too, its current state as its one version', async () => {
    expect(await migrateRollback(t.db, { all: true })).toEqual([...ALL].reverse());
    for (const name of ALL.slice(0, ALL.indexOf('0012_workflow_versions')))
      expect(await migrateUp(t.db)).toEqual([name]);
    const user_id = await insertReturningId(t.db, 'users', {
      login: 'm12',
      name: 'M',
      password_hash: 'x',
      created_at: 1000,
    });
    const workflow = (id: string, version: number, deleted_at: number | null) => ({
      id,
      user_id,
      name: `W ${id}`,
      name_lower: `w ${id}`,
      description: 'd',
      nodes: '[]',
      edges: '[]',
      version,
      created_at: 1000,
      updated_at: 2000 + version,
      deleted_at,
    });
    await t.db('workflows').insert([workflow('wf_a', 4, null), workflow('wf_b', 1, 3000)]);
    expect(await migrateUp(t.db)).toEqual(['0012_workflow_versions']);
    const rows = await t
      .db('workflow_versions')
      .orderBy('workflow_id')
      .select('workflow_id', 'version', 'name', 'nodes', 'restored_from', 'created_at');
    expect(rows).toEqual([
      { workflow_id: 'wf_a', version: 4, name: 'W wf_a', nodes: '[]', restored_from: null, created_at: 2004 },
      { workflow_id: 'wf_b', version: 1, name: 'W wf_b', nodes: '[]', restored_from: null, created_at: 2001 },
    ]);
    await t.db('users').where({ id: user_id }).delete();
    expect(await t.db('workflow_versions').count({ n: '*' }).first()).toMatchObject({ n: 0 });
    expect(await migrateLatest(t.db)).toEqual(ALL.slice(ALL.indexOf('0012_workflow_versions') + 1));
  });

  it('0021 keeps ES256 ID tokens for the applications registered before it; a later registration gets RS256 unless it says', async () => {
    expect(await migrateRollback(t.db, { all: true })).toEqual([...ALL].reverse());
    for (const name of ALL.slice(0, ALL.indexOf('0021_id_token_alg'))) expect(await migrateUp(t.db)).toEqual([name]);
    const owner_user_id = await insertReturningId(t.db, 'users', {
      login: 'm21',
      name: 'M',
      password_hash: 'x',
      created_at: 1000,
    });
    const app = (client_id: string) => ({
      client_id,
      owner_user_id,
      name: 'A',
      description: '',
      homepage: 'https://a.example',
      redirect_uri: 'https://a.example/cb',
      created_at: 2000,
    });
    await t.db('applications').insert(app('app_before'));
    expect(await migrateUp(t.db)).toEqual(['0021_id_token_alg']);
    await t.db('applications').insert(app('app_after'));
    expect(await t.db('applications').orderBy('client_id').select('client_id', 'id_token_signed_response_alg')).toEqual(
      [
        { client_id: 'app_after', id_token_signed_response_alg: 'RS256' },
        { client_id: 'app_before', id_token_signed_response_alg: 'ES256' },
      ],
    );
    await t.db('users').where({ id: owner_user_id }).delete();
  });

  it('0022 measures the bytes of every existing version, as new versions are measured', async () => {
    expect(await migrateRollback(t.db, { all: true })).toEqual(
      ALL.slice(0, ALL.indexOf('0021_id_token_alg') + 1).reverse(),
    );
    for (const name of ALL.slice(0, ALL.indexOf('0022_storage_quotas'))) expect(await migrateUp(t.db)).toEqual([name]);
    const user_id = await insertReturningId(t.db, 'users', {
      login: 'm22',
      name: 'M',
      password_hash: 'x',
      created_at: 1000,
    });
    const texts = { name: 'Größe ✓', description: 'dé', nodes: '[{"id":"ü"}]', edges: '[]' };
    await t.db('workflows').insert({
      id: 'wf_m22',
      user_id,
      name_lower: 'größe ✓',
      version: 1,
      created_at: 1000,
      updated_at: 1000,
      ...texts,
    });
    await t.db('workflow_versions').insert({
      workflow_id: 'wf_m22',
      version: 1,
      name_lower: 'größe ✓',
      restored_from: null,
      created_at: 1000,
      ...texts,
    });
    expect(await migrateUp(t.db)).toEqual(['0022_storage_quotas']);
    const { bytes } = (await t.db('workflow_versions').where({ workflow_id: 'wf_m22' }).first('bytes')) as {
      bytes: number | string;
    };
    expect(Number(bytes)).toBe(versionBytes(texts));
    expect(Number(bytes)).toBe(Buffer.byteLength(Object.values(texts).join('')));
    await t.db('users').where({ id: user_id }).delete();
    expect(await migrateRollback(t.db)).toEqual(['0022_storage_quotas']);
    expect(await migrateLatest(t.db)).toEqual(ALL.slice(ALL.indexOf('0022_storage_quotas')));
  });

  it('0024 requires PKCE of every application, those registered before it too; an opted-out one stays so', async () => {
    expect(await migrateRollback(t.db)).toEqual(ALL.slice(ALL.indexOf('0022_storage_quotas')).reverse());
    for (const name of ALL.slice(ALL.indexOf('0022_storage_quotas'), ALL.indexOf('0024_pkce_required')))
      expect(await migrateUp(t.db)).toEqual([name]);
    const owner_user_id = await insertReturningId(t.db, 'users', {
      login: 'm24',
      name: 'M',
      password_hash: 'x',
      created_at: 1000,
    });
    const app = (client_id: string) => ({
      client_id,
      owner_user_id,
      name: 'A',
      description: '',
      homepage: 'https://a.example',
      redirect_uri: 'https://a.example/cb',
      created_at: 2000,
    });
    await t.db('applications').insert(app('app_before'));
    expect(await migrateUp(t.db)).toEqual(['0024_pkce_required']);
    await t.db('applications').insert(app('app_after'));
    await t.db('applications').insert({ ...app('app_exempt'), pkce_required: false });
    const rows = await t.db('applications').orderBy('client_id').select('client_id', 'pkce_required');
    expect(
      rows.map((r: { client_id: string; pkce_required: unknown }) => [r.client_id, Boolean(r.pkce_required)]),
    ).toEqual([
      ['app_after', true],
      ['app_before', true],
      ['app_exempt', false],
    ]);
    await t.db('users').where({ id: owner_user_id }).delete();
  });

  it('0026 stores a token without an authorization (its user and client its own); rollback drops such tokens', async () => {
    expect(await migrateLatest(t.db)).toEqual(ALL.slice(ALL.indexOf('0025_refresh_successor_pairs')));
    const user_id = await insertReturningId(t.db, 'users', {
      login: 'm26',
      name: 'M',
      password_hash: 'x',
      created_at: 1000,
    });
    const application_id = await insertReturningId(t.db, 'applications', {
      client_id: 'app_m26',
      owner_user_id: user_id,
      name: 'A',
      description: '',
      homepage: 'https://a.example',
      redirect_uri: 'https://a.example/cb',
      created_at: 2000,
    });
    const token = (n: number) => ({
      access_token_hash: `a${n}`,
      refresh_token_hash: `r${n}`,
      scope: 'user_info',
      access_expires_at: 3000,
      refresh_expires_at: 4000,
      created_at: 2000,
    });
    await t.db('oauth_tokens').insert({ ...token(1), user_id, application_id });
    expect(
      await t
        .db('oauth_tokens')
        .where({ user_id, application_id })
        .whereNull('authorization_id')
        .pluck('refresh_token_hash'),
    ).toEqual(['r1']);
    expect(await migrateRollback(t.db)).toEqual(ALL.slice(ALL.indexOf('0025_refresh_successor_pairs')).reverse());
    expect(await t.db('oauth_tokens').where({ refresh_token_hash: 'r1' }).count({ n: '*' }).first()).toMatchObject({
      n: 0,
    });
    await expect(t.db('oauth_tokens').insert(token(2))).rejects.toThrow();
    expect(await migrateLatest(t.db)).toEqual(ALL.slice(ALL.indexOf('0025_refresh_successor_pairs')));
    await t.db('users').where({ id: user_id }).delete();
  });
});
