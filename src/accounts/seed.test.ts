import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';
import { appSecretContext } from '../db/sealedSecrets.ts';
import { createSealer } from '../shared/sealing.ts';
import { findUsableAccessTokenByPlaintext } from './accessTokens.ts';
import { findAppByClientId, verifyClientSecret } from './apps.ts';
import { listOrgsForUser } from './orgs.ts';
import { getOrCreateSecret } from './secrets.ts';
import { seedDemo } from './seed.ts';
import { verifyLogin } from './users.ts';
import { listWorkflows } from '../workflows/service.ts';

describe.each(testDialects())('demo seed and service secrets on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('seeds a demo user, org, app and workflows API key whose printed secrets work', async () => {
    const seed = await seedDemo({ db: t.db, config: loadConfig({ NODE_ENV: 'development' }), now: Date.now });
    expect(seed).not.toBeNull();
    const user = await verifyLogin(t, 'demo', 'horse-battery-staple');
    expect(user).toMatchObject({ id: seed!.user.id, name: 'Demo User' });
    expect((await listOrgsForUser(t, user!.id)).map((o) => o.namespace)).toEqual(['demo-org']);
    const app = await findAppByClientId(t, seed!.app.client_id);
    expect(app).toMatchObject({
      name: 'Demo App',
      redirect_uri: 'http://localhost:4000/callback',
      homepage: 'http://localhost:4000',
    });
    expect(await verifyClientSecret(t, app!.id, seed!.app.client_secret)).toBe(true);
    expect((await findUsableAccessTokenByPlaintext(t, seed!.apiKey.token))?.permissions).toEqual(['workflows']);
    // The demo's workflows: one with a branch, one that streams slowly, one that fails twice then succeeds.
    const workflows = await listWorkflows(
      { db: t.db, config: loadConfig({ NODE_ENV: 'development' }), now: Date.now },
      user!.id,
      { page: 1, perPage: 20 },
    );
    expect(workflows.data.map((w) => w.name).sort()).toEqual(['Flaky call', 'Slow summary', 'Triage']);
    const byName = new Map(workflows.data.map((w) => [w.name, w]));
    expect(byName.get('Triage')!.edges.filter((e) => e.branch)).toHaveLength(2);
    expect(byName.get('Slow summary')!.nodes.find((n) => n.type === 'llm_call')!.config).toMatchObject({
      model: 'echo-slow',
    });
    expect(byName.get('Flaky call')!.nodes.find((n) => n.type === 'llm_call')!.config).toMatchObject({
      model: 'echo-fail-2',
    });
    expect(seed!.workflows.map((w) => w.name)).toEqual(['Triage', 'Slow summary', 'Flaky call']);
  });

  it('does nothing on a second start', async () => {
    expect(await seedDemo({ db: t.db, config: loadConfig({ NODE_ENV: 'development' }), now: Date.now })).toBeNull();
    expect(await t.db('applications').count({ n: '*' }).first()).toMatchObject({ n: 1 });
  });

  it('generates a service secret once and returns the same value to every later caller, even concurrent ones; sealed at rest', async () => {
    const sealer = createSealer(Buffer.from(TEST_SECRETS_KEY, 'base64'));
    let calls = 0;
    const generate = () => `value-${++calls}`;
    const values = await Promise.all(
      [1, 2, 3, 4].map(() => getOrCreateSecret({ db: t.db, sealer }, 'session_key_test', generate)),
    );
    expect(new Set(values).size).toBe(1);
    expect(await getOrCreateSecret({ db: t.db, sealer }, 'session_key_test', () => 'other')).toBe(values[0]);
    const stored = (await t.db('app_secrets').where({ name: 'session_key_test' }).first()).value as string;
    expect(stored).toMatch(/^sealed:v1:/);
    expect(stored).not.toContain(values[0]);
    expect(sealer.open(stored, appSecretContext('session_key_test'))).toBe(values[0]);
  });
});
