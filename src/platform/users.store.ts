import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

export interface UserRow {
  id: number;
  login: string;
  name: string;
  avatar_url: string;
  password_hash: string;
  created_at: number;
}

export async function insertUser(db: Knex, row: Omit<UserRow, 'id'>): Promise<number> {
  return insertReturningId(db, 'users', row);
}

export async function findUserRowByLogin(db: Knex, login: string): Promise<UserRow | undefined> {
  return db<UserRow>('users').where({ login }).first();
}

export async function findUserRowById(db: Knex, id: number): Promise<UserRow | undefined> {
  return db<UserRow>('users').where({ id }).first();
}
