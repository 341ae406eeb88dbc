import type { Knex } from 'knex';
import { hashToken, newClientId, newToken, safeEqual } from '../shared/crypto.ts';
import { applicationNotFound, userNotFound } from '../shared/errors.ts';
import { revocationLease } from '../shared/principalLease.ts';
import {
  deleteAppRow,
  findAppRowByClientId,
  findAppRowOfOwner,
  insertApp,
  listAppRowsOfOwner,
  replaceSecretHash,
  updateAppDetails,
  type ApplicationRow,
} from './apps.store.ts';
import { findUserRowByLogin } from './users.store.ts';
import { canonicalName, checkHttpUrl, checkRedirectUri, checkText } from './validate.ts';

/** A registered OAuth client. `client_secret_hash` is a hash: safe to pass around, never to render. */
export type Application = ApplicationRow;

export interface NewApp {
  /** The owner, by login (CLI) or id (settings pages). */
  ownerLogin?: string;
  ownerUserId?: number;
  name: string;
  description: string;
  homepage: string;
  redirectUri: string;
}

export interface AppDetails {
  name?: string;
  description?: string;
  homepage?: string;
  redirectUri?: string;
}

/** The plaintext client secret exists only in this return value: show it once. */
export interface AppWithSecret {
  app: Application;
  clientSecret: string;
}

const CLIENT_SECRET_PREFIX = 'cs';

function checkDetails(input: AppDetails) {
  return {
    ...(input.name !== undefined ? { name: checkText('name', input.name, { max: 100 }) } : {}),
    ...(input.description !== undefined ? { description: checkText('description', input.description, { min: 0, max: 1000 }) } : {}),
    ...(input.homepage !== undefined ? { homepage: checkHttpUrl('homepage', input.homepage) } : {}),
    ...(input.redirectUri !== undefined ? { redirect_uri: checkRedirectUri('redirect_uri', input.redirectUri) } : {}),
  };
}

async function ownerId(db: Knex, input: Pick<NewApp, 'ownerLogin' | 'ownerUserId'>): Promise<number> {
  if (input.ownerUserId !== undefined) return input.ownerUserId;
  const owner = input.ownerLogin ? await findUserRowByLogin(db, canonicalName(input.ownerLogin)) : undefined;
  if (!owner) throw userNotFound(input.ownerLogin ?? '');
  return owner.id;
}

/** Registers an app and returns it with its client secret (stored only as a SHA-256 hash). */
export async function createApp(db: Knex, input: NewApp): Promise<AppWithSecret> {
  const details = checkDetails(input);
  const owner_user_id = await ownerId(db, input);
  const clientSecret = newToken(CLIENT_SECRET_PREFIX);
  const row = {
    client_id: newClientId(),
    client_secret_hash: hashToken(clientSecret),
    owner_user_id,
    name: details.name!,
    description: details.description!,
    homepage: details.homepage!,
    redirect_uri: details.redirect_uri!,
    created_at: Date.now(),
    secret_rotated_at: null,
  };
  const id = await insertApp(db, row);
  return { app: { id, ...row }, clientSecret };
}

export async function findAppByClientId(db: Knex, clientId: string): Promise<Application | undefined> {
  return findAppRowByClientId(db, clientId);
}

/** One of the owner's apps, or a 404 for apps that do not exist or belong to someone else. */
export async function getAppOfOwner(db: Knex, ownerUserId: number, appId: number): Promise<Application> {
  const app = await findAppRowOfOwner(db, ownerUserId, appId);
  if (!app) throw applicationNotFound(appId);
  return app;
}

/** Constant-time comparison of the hash of `secret` with the stored one (RFC 6749 2.3.1). */
export function verifyClientSecret(app: Pick<Application, 'client_secret_hash'>, secret: string): boolean {
  return safeEqual(hashToken(secret), app.client_secret_hash);
}

/** Replaces the client secret; the old one stops working at once. */
export async function rotateSecret(db: Knex, ownerUserId: number, appId: number): Promise<AppWithSecret> {
  const app = await getAppOfOwner(db, ownerUserId, appId);
  const clientSecret = newToken(CLIENT_SECRET_PREFIX);
  const now = Date.now();
  await replaceSecretHash(db, app.id, hashToken(clientSecret), now);
  return { app: { ...app, client_secret_hash: hashToken(clientSecret), secret_rotated_at: now }, clientSecret };
}

export async function updateApp(db: Knex, ownerUserId: number, appId: number, input: AppDetails): Promise<Application> {
  const details = checkDetails(input);
  const app = await getAppOfOwner(db, ownerUserId, appId);
  if (Object.keys(details).length) await updateAppDetails(db, app.id, details);
  return { ...app, ...details };
}

/** Deletes the app with every grant and token issued to it; answers once no process honours them. */
export async function deleteApp(db: Knex, ownerUserId: number, appId: number): Promise<void> {
  const app = await getAppOfOwner(db, ownerUserId, appId);
  await deleteAppRow(db, app.id);
  await revocationLease.settle();
}

export async function listAppsForOwner(db: Knex, ownerUserId: number): Promise<Application[]> {
  return listAppRowsOfOwner(db, ownerUserId);
}
