import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

export interface OrgRow {
  id: number;
  namespace: string;
  name: string;
  avatar_url: string;
  created_at: number;
}

export type Role = 'owner' | 'member';

export interface MembershipRow {
  org_id: number;
  user_id: number;
  role: Role;
  created_at: number;
}

export async function insertOrg(db: Knex, row: Omit<OrgRow, 'id'>): Promise<number> {
  return insertReturningId(db, 'organizations', row);
}

export async function findOrgRowByNamespace(db: Knex, namespace: string): Promise<OrgRow | undefined> {
  return db<OrgRow>('organizations').where({ namespace }).first();
}

export async function findMembership(db: Knex, orgId: number, userId: number): Promise<MembershipRow | undefined> {
  return db<MembershipRow>('memberships').where({ org_id: orgId, user_id: userId }).first();
}

export async function insertMembership(db: Knex, row: MembershipRow): Promise<void> {
  await db('memberships').insert(row);
}

export async function updateMembershipRole(db: Knex, orgId: number, userId: number, role: Role): Promise<void> {
  await db('memberships').where({ org_id: orgId, user_id: userId }).update({ role });
}

export async function deleteMembership(db: Knex, orgId: number, userId: number): Promise<number> {
  return db('memberships').where({ org_id: orgId, user_id: userId }).delete();
}

export async function countOwners(db: Knex, orgId: number): Promise<number> {
  const row = await db('memberships').where({ org_id: orgId, role: 'owner' }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** The user's organizations, each with the user's role in it. */
export async function listOrgRowsForUser(db: Knex, userId: number): Promise<Array<OrgRow & { role: Role }>> {
  return db('organizations as o')
    .join('memberships as m', 'm.org_id', 'o.id')
    .where('m.user_id', userId)
    .orderBy('o.namespace')
    .select('o.id', 'o.namespace', 'o.name', 'o.avatar_url', 'o.created_at', 'm.role');
}

export interface MemberRow {
  user_id: number;
  login: string;
  name: string;
  role: Role;
  created_at: number;
}

export async function listMemberRows(db: Knex, orgId: number): Promise<MemberRow[]> {
  return db('memberships as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', orgId)
    .orderBy('u.login')
    .select('m.user_id', 'u.login', 'u.name', 'm.role', 'm.created_at');
}
