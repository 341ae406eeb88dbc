import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { listAccessTokens } from './accessTokens.ts';
import { addMember, createOrg, listMembers, listOrgsForUser, removeMember } from './orgs.ts';
import { createUser, type User } from './users.ts';

describe.each(testDialects())('organizations on %s', (dialect) => {
  let t: TestDb;
  let owner: User;
  let member: User;
  let outsider: User;
  beforeAll(async () => {
    t = await createTestDb(dialect);
    owner = await createUser(t, { login: 'owner', password: 'test-password-1' });
    member = await createUser(t, { login: 'member', password: 'test-password-1' });
    outsider = await createUser(t, { login: 'outsider', password: 'test-password-1' });
  });
  afterAll(async () => {
    await t?.destroy();
  });
  /** Whether the user may use the namespace, as the API-key endpoints ask it (a 404 when not). */
  const userCanUseNamespace = (userId: number, namespace: string) =>
    listAccessTokens(t, userId, namespace).then(
      () => true,
      (err: { status?: number }) => (err.status === 404 ? false : Promise.reject(err)),
    );

  it('creates an org with its creator as owner and claims its namespace', async () => {
    const org = await createOrg(t, { namespace: 'Research', name: 'Research Lab', ownerLogin: 'owner' });
    expect(org).toMatchObject({ namespace: 'research', name: 'Research Lab' });
    expect(await listMembers(t, 'research')).toEqual([expect.objectContaining({ login: 'owner', role: 'owner' })]);
    expect(await t.db('namespaces').where({ name: 'research' }).first()).toMatchObject({
      org_id: org.id,
      user_id: null,
    });
  });

  it('refuses a namespace taken by a user or another org (409)', async () => {
    await expect(createOrg(t, { namespace: 'member', name: 'X', ownerLogin: 'owner' })).rejects.toMatchObject({
      status: 409,
    });
    await expect(createOrg(t, { namespace: 'RESEARCH', name: 'X', ownerLogin: 'owner' })).rejects.toMatchObject({
      status: 409,
    });
  });

  it('answers 404 for an unknown owner and leaves no half-created org behind', async () => {
    await expect(createOrg(t, { namespace: 'ghost-org', name: 'X', ownerLogin: 'ghost' })).rejects.toMatchObject({
      status: 404,
    });
    expect(await t.db('namespaces').where({ name: 'ghost-org' }).first()).toBeUndefined();
  });

  it('lists the orgs a user belongs to as {id, namespace, name, avatar_url}', async () => {
    await addMember(t, 'research', 'member');
    const orgs = await listOrgsForUser(t, member.id);
    expect(orgs).toHaveLength(1);
    expect(Object.keys(orgs[0]!).sort()).toEqual(['avatar_url', 'id', 'name', 'namespace']);
    expect(await listOrgsForUser(t, outsider.id)).toEqual([]);
  });

  it('lets a user use their own login and their orgs as namespaces, and nothing else', async () => {
    expect(await userCanUseNamespace(member.id, 'member')).toBe(true);
    expect(await userCanUseNamespace(member.id, 'Research')).toBe(true);
    expect(await userCanUseNamespace(outsider.id, 'research')).toBe(false);
    expect(await userCanUseNamespace(outsider.id, 'member')).toBe(false);
    expect(await userCanUseNamespace(outsider.id, 'no-such-namespace')).toBe(false);
  });

  it('changes the role of an existing member instead of adding them twice', async () => {
    await addMember(t, 'research', 'member', 'owner');
    const members = await listMembers(t, 'research');
    expect(members.map((m) => [m.login, m.role])).toEqual([
      ['member', 'owner'],
      ['owner', 'owner'],
    ]);
  });

  it('rejects an unknown role (400) and unknown org or user (404)', async () => {
    await expect(addMember(t, 'research', 'outsider', 'admin')).rejects.toMatchObject({ status: 400 });
    await expect(addMember(t, 'nope', 'outsider')).rejects.toMatchObject({ status: 404 });
    await expect(addMember(t, 'research', 'ghost')).rejects.toMatchObject({ status: 404 });
  });

  it('keeps at least one owner: the last owner cannot be demoted or removed (409)', async () => {
    await removeMember(t, 'research', 'member');
    await expect(addMember(t, 'research', 'owner', 'member')).rejects.toMatchObject({ status: 409 });
    await expect(removeMember(t, 'research', 'owner')).rejects.toMatchObject({ status: 409 });
    expect(await userCanUseNamespace(member.id, 'research')).toBe(false);
    expect(owner.id).toBeGreaterThan(0);
  });
});
