import type { DbContext } from '../context.ts';
import { isUniqueViolation } from '../db/insert.ts';
import { hashPassword, passwordNeedsRehash, verifyPassword } from '../shared/crypto.ts';
import { lastOwner, nameTaken, userNotFound } from '../shared/errors.ts';
import { revocationLease } from '../shared/principalLease.ts';
import { deleteWebSessionsOfUser } from './sessions.store.ts';
import { defaultAvatarUrl } from './avatars.ts';
import { claimNamespace, findNamespace } from './namespaces.store.ts';
import {
  anyUserRow,
  deleteUserRow,
  findOrgsOnlyOwnedBy,
  findUserRowById,
  findUserRowByLogin,
  insertUser,
  updatePasswordHash,
  upgradePasswordHash,
  type UserRow,
} from './users.store.ts';
import { checkPassword } from './passwordPolicy.ts';
import { canonicalName, checkAvatarUrl, checkNamespaceName, checkText } from './validate.ts';

/** A platform user as services hand it out: never the password hash. */
export interface User {
  id: number;
  login: string;
  name: string;
  avatar_url: string;
  created_at: number;
}

export interface NewUser {
  login: string;
  password: string;
  /** Defaults to the login. */
  name?: string;
  /** Defaults to a generated initial avatar (data: URI). */
  avatarUrl?: string;
}

function toUser(row: UserRow): User {
  return {
    id: row.id,
    login: row.login,
    name: row.name,
    avatar_url: row.avatar_url,
    created_at: Number(row.created_at),
  };
}

/** Creates a user and claims its login as a namespace. Logins are unique across users and orgs (409). */
export async function createUser(ctx: DbContext, input: NewUser): Promise<User> {
  const login = checkNamespaceName('login', input.login);
  checkPassword(input.password, login);
  const name = checkText('name', input.name?.trim() ? input.name : login, { max: 255 });
  const avatarUrl = input.avatarUrl ? checkAvatarUrl('avatar_url', input.avatarUrl) : defaultAvatarUrl(login);
  const passwordHash = await hashPassword(input.password);

  try {
    return await ctx.db.transaction(async (trx) => {
      if (await findNamespace(trx, login)) throw nameTaken(login);
      const row = { login, name, avatar_url: avatarUrl, password_hash: passwordHash, created_at: Date.now() };
      const id = await insertUser(trx, row);
      await claimNamespace(trx, { name: login, user_id: id, org_id: null });
      return toUser({ id, ...row });
    });
  } catch (err) {
    // Two concurrent creations of one name: the namespaces primary key decides.
    if (isUniqueViolation(err)) throw nameTaken(login);
    throw err;
  }
}

/** Whether any account exists (none: the first owner is still to be created with the admin CLI). */
export async function anyUserExists(ctx: DbContext): Promise<boolean> {
  return anyUserRow(ctx.db);
}

export async function findUserByLogin(ctx: DbContext, login: string): Promise<User | undefined> {
  const row = await findUserRowByLogin(ctx.db, canonicalName(login));
  return row && toUser(row);
}

export async function findUserById(ctx: DbContext, id: number): Promise<User | undefined> {
  const row = await findUserRowById(ctx.db, id);
  return row && toUser(row);
}

// Hashed once: verifying against it makes an unknown login cost as much as a wrong password.
let dummyHash: Promise<string> | undefined;

/** The user when login and password match, else null; takes the same time whether or not the login exists. */
export async function verifyLogin(ctx: DbContext, login: string, password: string): Promise<User | null> {
  const row = await findUserRowByLogin(ctx.db, canonicalName(login));
  if (!row) {
    dummyHash ??= hashPassword('not-a-real-password');
    await verifyPassword(password, await dummyHash);
    return null;
  }
  if (!(await verifyPassword(password, row.password_hash))) return null;
  // Hashes made at an older, cheaper cost are upgraded now, the one moment the password is known.
  if (passwordNeedsRehash(row.password_hash))
    await upgradePasswordHash(ctx.db, row.id, row.password_hash, await hashPassword(password));
  return toUser(row);
}

/** Sets a new password and ends every browser session of the user at once (a stolen cookie with them). */
export async function setPassword(
  ctx: DbContext,
  login: string,
  password: string,
): Promise<{ user: User; sessionsEnded: number }> {
  checkPassword(password, canonicalName(login));
  const passwordHash = await hashPassword(password);
  return ctx.db.transaction(async (trx) => {
    const row = await findUserRowByLogin(trx, canonicalName(login));
    if (!row) throw userNotFound(login);
    await updatePasswordHash(trx, row.id, passwordHash);
    return { user: toUser(row), sessionsEnded: await deleteWebSessionsOfUser(trx, row.id) };
  });
}

/**
 * Deletes a user with everything theirs (browser sessions, applications, grants and tokens issued to
 * or by them, access tokens, workflows and runs, memberships, their namespace: the foreign keys
 * cascade), so their sessions end at once. Refused (409) while the user is the last owner of an
 * organization: it would be left with no one to manage it.
 */
export async function deleteUser(ctx: DbContext, login: string): Promise<User> {
  const user = await ctx.db.transaction(async (trx) => {
    const row = await findUserRowByLogin(trx, canonicalName(login));
    if (!row) throw userNotFound(login);
    const [sole] = await findOrgsOnlyOwnedBy(trx, row.id);
    if (sole) throw lastOwner(row.login, sole);
    await deleteUserRow(trx, row.id);
    return toUser(row);
  });
  await revocationLease.settle(); // after the commit: answers once no process honours the user's tokens
  return user;
}
