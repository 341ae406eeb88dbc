import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { Browser, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer } from '../../test/support/server.ts';
import { keyRing } from '../open/signingKeys.ts';
import { loadSessionKey } from '../accounts/sessionKey.ts';
import { createUser } from '../accounts/users.ts';
import { createSealer, kekId } from '../shared/sealing.ts';
import { migrateLatest } from './migrate.ts';

const exec = promisify(execFile);

function admin(env: Record<string, string>, ...args: string[]) {
  return exec('sh', ['scripts/node.sh', 'src/cli/admin.ts', ...args, '--json'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', ...env },
  });
}

async function storedSecrets(t: TestDb): Promise<string[]> {
  return [
    ...(await t.db('signing_keys').pluck('private_jwk')),
    ...(await t.db('app_secrets').pluck('value')),
  ] as string[];
}

describe.each(testDialects())('secrets sealed at rest on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('the 0003 migration seals the plaintext secrets an earlier version stored', async () => {
    const old = await createTestDb(dialect);
    try {
      // A store as the previous version left it: 0001 applied, secrets in plaintext.
      await old.db('knex_migrations').where({ name: '0003_seal_secrets' }).delete();
      const jwk = JSON.stringify({ kty: 'EC', crv: 'P-256', d: 'private-part', x: 'x', y: 'y' });
      await old
        .db('signing_keys')
        .insert({ kid: 'k1', alg: 'ES256', private_jwk: jwk, public_jwk: '{}', created_at: 1, retired_at: null });
      await old.db('app_secrets').insert({ name: 'session_key', value: 'plain-session-key', created_at: 1 });

      await expect(migrateLatest(old.db)).rejects.toThrow(/no key-encryption key/);
      const sealer = createSealer(randomBytes(32));
      expect(await migrateLatest(old.db, { sealer })).toEqual(['0003_seal_secrets']);
      const [privateJwk, sessionKey] = await storedSecrets(old);
      expect(privateJwk).toMatch(/^sealed:v1:/);
      expect(sessionKey).toMatch(/^sealed:v1:/);
      expect(`${privateJwk}${sessionKey}`).not.toMatch(/private-part|plain-session-key/);
      expect(sealer.open(privateJwk!, 'signing_keys.private_jwk:k1')).toBe(jwk);
      expect(sealer.open(sessionKey!, 'app_secrets.value:session_key')).toBe('plain-session-key');
    } finally {
      await old.destroy();
    }
  });

  // Four admin CLI processes and two services: a guard against a hang, not a speed check.
  it(
    'rotates the key-encryption key: SECRETS_KEY_PREVIOUS keeps the service working until `admin secrets reseal`, then the old key is not needed',
    { timeout: 180_000 },
    async () => {
      const oldKey = randomBytes(32).toString('base64');
      const newKey = randomBytes(32).toString('base64');
      await createUser(t, { login: 'rotator', password: 'rotate-password-1' });

      // A service on the old key: a session and a signing key are created (sealed with it).
      const before = await startTestServer({ databaseUrl: t.url, env: { SECRETS_KEY: oldKey } });
      const browser = new Browser(before.baseUrl);
      let kid: string;
      try {
        expect((await logIn(browser, 'rotator', 'rotate-password-1')).status).toBe(303);
        kid = (await keyRing(before.ctx).signingKey('ES256')).kid;
      } finally {
        await before.close();
      }

      // Only the new key: the stored secrets do not open (the error names the key that sealed them).
      const { createKnex } = await import('./knex.ts');
      const probe = createKnex(t.url, { poolMax: 1 });
      try {
        const ctx = { db: probe, sealer: createSealer(Buffer.from(newKey, 'base64')) } as Parameters<
          typeof loadSessionKey
        >[0];
        await expect(loadSessionKey(ctx)).rejects.toThrow(`key-encryption key ${kekId(Buffer.from(oldKey, 'base64'))}`);
      } finally {
        await probe.destroy();
      }
      const refused = await admin({ DATABASE_URL: t.url, SECRETS_KEY: newKey }, 'secrets', 'reseal').catch(
        (e: { code: number; stdout: string }) => e,
      );
      expect(refused).toMatchObject({ code: 1 });
      // --json: the failure is one JSON object on stdout.
      expect(JSON.parse((refused as { stdout: string }).stdout)).toEqual({
        error: {
          code: 'secrets',
          message: expect.stringMatching(/neither SECRETS_KEY .* nor in SECRETS_KEY_PREVIOUS/),
        },
      });

      // The new key with the old one as previous: reseal everything with the new key.
      const { stdout } = await admin(
        { DATABASE_URL: t.url, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey },
        'secrets',
        'reseal',
      );
      const report = JSON.parse(stdout) as { key_id: string; sealed: number; unchanged: number };
      expect(report).toEqual({ key_id: kekId(Buffer.from(newKey, 'base64')), sealed: 2, unchanged: 0 });
      expect(stdout).not.toContain(newKey);
      for (const value of await storedSecrets(t)) expect(value.split(':')[2]).toBe(report.key_id);
      const again = JSON.parse(
        (await admin({ DATABASE_URL: t.url, SECRETS_KEY: newKey }, 'secrets', 'reseal')).stdout,
      ) as { sealed: number };
      expect(again).toMatchObject({ sealed: 0, unchanged: 2 });

      // A service on the new key alone: the earlier session cookie and signing key still stand.
      const after = await startTestServer({ databaseUrl: t.url, env: { SECRETS_KEY: newKey } });
      try {
        const settings = await browser.fetch(`${after.baseUrl}/settings/applications`);
        expect(settings.status).toBe(200);
        expect((await keyRing(after.ctx).signingKey('ES256')).kid).toBe(kid);
      } finally {
        await after.close();
      }
    },
  );
});
