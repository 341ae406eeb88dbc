import type { Knex } from 'knex';
import type { DbContext } from '../context.ts';
import { isUniqueViolation } from '../db/insert.ts';
import {
  invalidField,
  lastOwner,
  nameTaken,
  notAMember,
  organizationNotFound,
  userNotFound,
} from '../shared/errors.ts';
import { revocationLease } from '../shared/principalLease.ts';
import { defaultAvatarUrl } from './avatars.ts';
import { claimNamespace, findNamespace } from './namespaces.store.ts';
import {
  countOwners,
  deleteMembership,
  findMembership,
  findOrgRowByNamespace,
  insertMembership,
  insertOrg,
  listMemberRows,
  listOrgRowsForUser,
  updateMembershipRole,
  type MemberRow,
  type MembershipRow,
  type Role,
} from './orgs.store.ts';
import { deleteAccessTokenRowsInNamespace } from './accessTokens.store.ts';
import { findUserRowByLogin } from './users.store.ts';
import { canonicalName, checkAvatarUrl, checkNamespaceName, checkText } from './validate.ts';

export type { Role, MemberRow } from './orgs.store.ts';

/** The organization shape of `GET /api/open/v1/orgs`. */
export interface Organization {
  id: number;
  namespace: string;
  name: string;
  avatar_url: string;
}

export interface NewOrg {
  namespace: string;
  name: string;
  ownerLogin: string;
  avatarUrl?: string;
}

const ROLES: readonly Role[] = ['owner', 'member'];

function checkRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) {
    throw invalidField(`role must be owner or member (got "${role}").`, '/role', 'must be owner or member');
  }
  return role as Role;
}

async function userIdByLogin(db: Knex, login: string): Promise<number> {
  const user = await findUserRowByLogin(db, canonicalName(login));
  if (!user) throw userNotFound(login);
  return user.id;
}

/** What an organization row shows of itself. */
const organizationOf = (o: Organization): Organization => ({
  id: o.id,
  namespace: o.namespace,
  name: o.name,
  avatar_url: o.avatar_url,
});

async function orgByNamespace(db: Knex, namespace: string) {
  const org = await findOrgRowByNamespace(db, canonicalName(namespace));
  if (!org) throw organizationNotFound(namespace);
  return org;
}

/** Creates an organization owned by `ownerLogin`; its namespace is unique across users and orgs (409). */
export async function createOrg(ctx: DbContext, input: NewOrg): Promise<Organization> {
  const namespace = checkNamespaceName('namespace', input.namespace);
  const name = checkText('name', input.name, { max: 255 });
  const avatarUrl = input.avatarUrl ? checkAvatarUrl('avatar_url', input.avatarUrl) : defaultAvatarUrl(namespace);
  try {
    return await ctx.db.transaction(async (trx) => {
      const ownerId = await userIdByLogin(trx, input.ownerLogin);
      if (await findNamespace(trx, namespace)) throw nameTaken(namespace);
      const now = Date.now();
      const id = await insertOrg(trx, { namespace, name, avatar_url: avatarUrl, created_at: now });
      await claimNamespace(trx, { name: namespace, user_id: null, org_id: id });
      await insertMembership(trx, { org_id: id, user_id: ownerId, role: 'owner', created_at: now });
      return { id, namespace, name, avatar_url: avatarUrl };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(namespace);
    throw err;
  }
}

/** Adds `login` to the org, or changes the role of an existing member. */
export async function addMember(
  ctx: DbContext,
  namespace: string,
  login: string,
  role: string = 'member',
): Promise<MembershipRow> {
  const checkedRole = checkRole(role);
  return ctx.db.transaction(async (trx) => {
    const org = await orgByNamespace(trx, namespace);
    const userId = await userIdByLogin(trx, login);
    const existing = await findMembership(trx, org.id, userId);
    if (existing) {
      if (existing.role === 'owner' && checkedRole !== 'owner' && (await countOwners(trx, org.id)) === 1) {
        throw lastOwner(login, org.namespace);
      }
      await updateMembershipRole(trx, org.id, userId, checkedRole);
      return { ...existing, role: checkedRole };
    }
    const row: MembershipRow = { org_id: org.id, user_id: userId, role: checkedRole, created_at: Date.now() };
    await insertMembership(trx, row);
    return row;
  });
}

/**
 * Removes a member; an organization keeps at least one owner (409). The member's access tokens in
 * the organization's namespace are deleted with the membership: re-adding the member later must
 * not bring back keys (and the proxy tokens minted from them) issued before they left. Answers
 * once no process honours them (the principal lease).
 */
export async function removeMember(ctx: DbContext, namespace: string, login: string): Promise<void> {
  await ctx.db.transaction(async (trx) => {
    const org = await orgByNamespace(trx, namespace);
    const userId = await userIdByLogin(trx, login);
    const existing = await findMembership(trx, org.id, userId);
    if (!existing) throw notAMember(login, org.namespace);
    if (existing.role === 'owner' && (await countOwners(trx, org.id)) === 1) {
      throw lastOwner(login, org.namespace);
    }
    await deleteMembership(trx, org.id, userId);
    await deleteAccessTokenRowsInNamespace(trx, userId, org.namespace);
  });
  await revocationLease.settle(); // after the commit
}

export async function listMembers(ctx: DbContext, namespace: string): Promise<MemberRow[]> {
  return (await getOrgWithMembers(ctx, namespace)).members;
}

/** The organization and its members, found by one lookup of its namespace (the organization page). */
export async function getOrgWithMembers(
  ctx: DbContext,
  namespace: string,
): Promise<{ org: Organization; members: MemberRow[] }> {
  const o = await orgByNamespace(ctx.db, namespace);
  return { org: organizationOf(o), members: await listMemberRows(ctx.db, o.id) };
}

/** The organizations a user belongs to, ordered by namespace. */
export async function listOrgsForUser(ctx: DbContext, userId: number): Promise<Organization[]> {
  const rows = await listOrgRowsForUser(ctx.db, userId);
  return rows.map(organizationOf);
}

/** The organizations a user belongs to with the user's role in each (the settings page). */
export async function listOrgsWithRoleForUser(
  ctx: DbContext,
  userId: number,
): Promise<Array<Organization & { role: Role }>> {
  const rows = await listOrgRowsForUser(ctx.db, userId);
  return rows.map((o) => ({ ...organizationOf(o), role: o.role }));
}
