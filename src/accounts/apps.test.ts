import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { hashToken } from '../shared/crypto.ts';
import {
  addClientSecret,
  createApp,
  createAppOnce,
  deleteApp,
  deleteClientSecret,
  findAppByClientId,
  listAppsForOwner,
  listClientSecrets,
  updateApp,
  verifyClientSecret,
} from './apps.ts';
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
    owner = await createUser(t, { login: 'owner', password: 'test-password-1' });
    stranger = await createUser(t, { login: 'stranger', password: 'test-password-1' });
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('registers an app with an app_ client_id and a cs_ client secret shown once', async () => {
    const { app, clientSecret } = await createApp(t, { ownerLogin: 'owner', ...details });
    expect(app.client_id).toMatch(/^app_[0-9a-f]{20}$/);
    expect(clientSecret).toMatch(/^cs_[\w-]{43}$/);
    expect(app).toMatchObject({ owner_user_id: owner.id, name: 'Notes', redirect_uri: details.redirectUri });
    expect((await findAppByClientId(t, app.client_id))?.id).toBe(app.id);
  });

  it('stores the client secret only as its SHA-256 hash', async () => {
    const { app, clientSecret } = await createApp(t, { ownerUserId: owner.id, ...details });
    const rows = await t.db('client_secrets').where({ application_id: app.id });
    expect(rows.map((r) => r.secret_hash)).toEqual([hashToken(clientSecret)]);
    expect(JSON.stringify([rows, await t.db('applications').where({ id: app.id }).first()])).not.toContain(
      clientSecret,
    );
  });

  it('verifies the client secret: the issued one passes (and is marked used), anything else fails', async () => {
    const { app, clientSecret } = await createApp(t, { ownerLogin: 'owner', ...details });
    expect((await listClientSecrets(t, owner.id, app.id))[0]!.last_used_at).toBeNull();
    expect(await verifyClientSecret(t, app.id, clientSecret)).toBe(true);
    expect(await verifyClientSecret(t, app.id, clientSecret + 'x')).toBe(false);
    expect(await verifyClientSecret(t, app.id, '')).toBe(false);
    expect((await listClientSecrets(t, owner.id, app.id))[0]!.last_used_at).toEqual(expect.any(Number));
  });

  it('keeps the old secret valid beside a new one until it is deleted; two at most; the last goes only when meant', async () => {
    const { app, clientSecret: old } = await createApp(t, { ownerLogin: 'owner', ...details });
    const { clientSecret: fresh } = await addClientSecret(t, owner.id, app.id);
    expect(await verifyClientSecret(t, app.id, old)).toBe(true);
    expect(await verifyClientSecret(t, app.id, fresh)).toBe(true);
    await expect(addClientSecret(t, owner.id, app.id)).rejects.toMatchObject({ status: 409 });

    const [first, second] = await listClientSecrets(t, owner.id, app.id);
    await deleteClientSecret(t, owner.id, app.id, first!.id);
    expect(await verifyClientSecret(t, app.id, old)).toBe(false);
    expect(await verifyClientSecret(t, app.id, fresh)).toBe(true);

    await expect(deleteClientSecret(t, owner.id, app.id, second!.id)).rejects.toMatchObject({ status: 409 });
    expect(await verifyClientSecret(t, app.id, fresh)).toBe(true);
    await deleteClientSecret(t, owner.id, app.id, second!.id, { evenTheLast: true });
    expect(await verifyClientSecret(t, app.id, fresh)).toBe(false);
    expect(await listClientSecrets(t, owner.id, app.id)).toEqual([]);
    // A secret of another app is not this app's to delete.
    const other = await createApp(t, { ownerLogin: 'owner', ...details });
    const [otherSecret] = await listClientSecrets(t, owner.id, other.app.id);
    await expect(deleteClientSecret(t, owner.id, app.id, otherSecret!.id, { evenTheLast: true })).rejects.toMatchObject(
      { status: 404 },
    );
  });

  it('registers once per form nonce: the same nonce again answers the app it made, without a secret', async () => {
    const nonce = 'n'.repeat(32);
    const first = await createAppOnce(t, { ownerUserId: owner.id, ...details }, nonce);
    expect(first.clientSecret).toEqual(expect.any(String));
    const again = await Promise.all([1, 2].map(() => createAppOnce(t, { ownerUserId: owner.id, ...details }, nonce)));
    expect(again.map((r) => [r.app.id, r.clientSecret])).toEqual([
      [first.app.id, null],
      [first.app.id, null],
    ]);
    // Two submissions at once of a fresh form: one app.
    const raced = await Promise.all(
      [1, 2, 3].map(() => createAppOnce(t, { ownerUserId: owner.id, ...details }, 'r'.repeat(32))),
    );
    expect(new Set(raced.map((r) => r.app.id)).size).toBe(1);
    expect(raced.filter((r) => r.clientSecret !== null)).toHaveLength(1);
    // Another user's nonce is theirs.
    expect((await createAppOnce(t, { ownerUserId: stranger.id, ...details }, nonce)).clientSecret).toEqual(
      expect.any(String),
    );
    await deleteApp(t, stranger.id, (await listAppsForOwner(t, stranger.id))[0]!.id);
  });

  it('hides other owners apps: secrets, update and delete answer 404', async () => {
    const { app } = await createApp(t, { ownerLogin: 'owner', ...details });
    await expect(addClientSecret(t, stranger.id, app.id)).rejects.toMatchObject({ status: 404 });
    await expect(listClientSecrets(t, stranger.id, app.id)).rejects.toMatchObject({ status: 404 });
    await expect(updateApp(t, stranger.id, app.id, { name: 'Mine' })).rejects.toMatchObject({ status: 404 });
    await expect(deleteApp(t, stranger.id, app.id)).rejects.toMatchObject({ status: 404 });
  });

  it('rejects a redirect_uri with userinfo (user:password@ before the host; RFC 9700 4.1.1), as the admin CLI and the pages register through here', async () => {
    for (const redirectUri of ['https://user:pw@x.example/cb', 'https://x.example@evil.example/cb']) {
      await expect(createApp(t, { ownerLogin: 'owner', ...details, redirectUri })).rejects.toMatchObject({
        status: 400,
        message: expect.stringMatching(/must not contain a user name or password/),
      });
    }
  });

  it('rejects a redirect_uri with a fragment or a non-http scheme (RFC 6749 3.1.2)', async () => {
    for (const redirectUri of ['https://x.example/cb#frag', 'ftp://x.example/cb', 'not a url']) {
      await expect(createApp(t, { ownerLogin: 'owner', ...details, redirectUri })).rejects.toMatchObject({
        status: 400,
      });
    }
  });

  it('answers 404 for an unknown owner login', async () => {
    await expect(createApp(t, { ownerLogin: 'ghost', ...details })).rejects.toMatchObject({ status: 404 });
  });

  it('updates details and lists the owner apps, deleting one removes it', async () => {
    const { app } = await createApp(t, { ownerLogin: 'stranger', ...details });
    expect((await updateApp(t, stranger.id, app.id, { name: 'Renamed' })).name).toBe('Renamed');
    expect((await listAppsForOwner(t, stranger.id)).map((a) => a.name)).toEqual(['Renamed']);
    await deleteApp(t, stranger.id, app.id);
    expect(await listAppsForOwner(t, stranger.id)).toEqual([]);
    expect(await findAppByClientId(t, app.client_id)).toBeUndefined();
  });
});
