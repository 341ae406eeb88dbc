import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { hashToken } from '../shared/crypto.ts';
import { createApp, deleteApp, findAppByClientId, listAppsForOwner, rotateSecret, updateApp, verifyClientSecret } from './apps.ts';
import { createUser, type User } from './users.ts';

const details = {
  name: 'Notes',
  description: 'Takes notes',
  homepage: 'https://notes.example',
  redirectUri: 'https://notes.example/callback',
};

describe.each(testDialects())('applications on %s', (dialect) => {
  let t: TestDb;
  let owner: User;
  let stranger: User;
  beforeAll(async () => {
    t = await createTestDb(dialect);
    owner = await createUser(t.db, { login: 'owner', password: 'password-1' });
    stranger = await createUser(t.db, { login: 'stranger', password: 'password-1' });
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('registers an app with an app_ client_id and a cs_ client secret shown once', async () => {
    const { app, clientSecret } = await createApp(t.db, { ownerLogin: 'owner', ...details });
    expect(app.client_id).toMatch(/^app_[0-9a-f]{20}$/);
    expect(clientSecret).toMatch(/^cs_[\w-]{43}$/);
    expect(app).toMatchObject({ owner_user_id: owner.id, name: 'Notes', redirect_uri: details.redirectUri });
    expect((await findAppByClientId(t.db, app.client_id))?.id).toBe(app.id);
  });

  it('stores the client secret only as its SHA-256 hash', async () => {
    const { app, clientSecret } = await createApp(t.db, { ownerUserId: owner.id, ...details });
    const row = await t.db('applications').where({ id: app.id }).first();
    expect(row.client_secret_hash).toBe(hashToken(clientSecret));
    expect(JSON.stringify(row)).not.toContain(clientSecret);
  });

  it('verifies the client secret: the issued one passes, anything else fails', async () => {
    const { app, clientSecret } = await createApp(t.db, { ownerLogin: 'owner', ...details });
    expect(verifyClientSecret(app, clientSecret)).toBe(true);
    expect(verifyClientSecret(app, clientSecret + 'x')).toBe(false);
    expect(verifyClientSecret(app, '')).toBe(false);
  });

  it('rotating the secret makes the old one fail and the new one pass', async () => {
    const { app, clientSecret: old } = await createApp(t.db, { ownerLogin: 'owner', ...details });
    const { clientSecret: fresh } = await rotateSecret(t.db, owner.id, app.id);
    const stored = (await findAppByClientId(t.db, app.client_id))!;
    expect(verifyClientSecret(stored, old)).toBe(false);
    expect(verifyClientSecret(stored, fresh)).toBe(true);
  });

  it('hides other owners apps: rotate, update and delete answer 404', async () => {
    const { app } = await createApp(t.db, { ownerLogin: 'owner', ...details });
    await expect(rotateSecret(t.db, stranger.id, app.id)).rejects.toMatchObject({ status: 404 });
    await expect(updateApp(t.db, stranger.id, app.id, { name: 'Mine' })).rejects.toMatchObject({ status: 404 });
    await expect(deleteApp(t.db, stranger.id, app.id)).rejects.toMatchObject({ status: 404 });
  });

  it('rejects a redirect_uri with a fragment or a non-http scheme (RFC 6749 3.1.2)', async () => {
    for (const redirectUri of ['https://x.example/cb#frag', 'ftp://x.example/cb', 'not a url']) {
      await expect(createApp(t.db, { ownerLogin: 'owner', ...details, redirectUri })).rejects.toMatchObject({ status: 400 });
    }
  });

  it('answers 404 for an unknown owner login', async () => {
    await expect(createApp(t.db, { ownerLogin: 'ghost', ...details })).rejects.toMatchObject({ status: 404 });
  });

  it('updates details and lists the owner apps, deleting one removes it', async () => {
    const { app } = await createApp(t.db, { ownerLogin: 'stranger', ...details });
    expect((await updateApp(t.db, stranger.id, app.id, { name: 'Renamed' })).name).toBe('Renamed');
    expect((await listAppsForOwner(t.db, stranger.id)).map((a) => a.name)).toEqual(['Renamed']);
    await deleteApp(t.db, stranger.id, app.id);
    expect(await listAppsForOwner(t.db, stranger.id)).toEqual([]);
    expect(await findAppByClientId(t.db, app.client_id)).toBeUndefined();
  });
});
