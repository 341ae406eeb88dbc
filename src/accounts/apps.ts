import type { Knex } from 'knex';
import type { DbContext } from '../context.ts';
import { hashToken, newClientId, newToken, safeEqual } from '../shared/crypto.ts';
import {
  applicationNotFound,
  clientSecretNotFound,
  lastClientSecret,
  tooManyClientSecrets,
  userNotFound,
} from '../shared/errors.ts';
import { revocationLease } from '../shared/principalLease.ts';
import { isUniqueViolation } from '../db/insert.ts';
import {
  deleteAppRow,
  deleteClientSecretRow,
  findAppRowByClientId,
  findAppRowByNonce,
  findAppRowOfOwner,
  insertApp,
  insertClientSecret,
  listAppRowsOfKind,
  listAppRowsOfOwner,
  listClientSecretRows,
  markClientSecretUsed,
  updateAppDetails,
  type ApplicationRow,
  type ClientSecretRow,
} from './apps.store.ts';
import { findUserRowByLogin } from './users.store.ts';
import { storedClientIdOf } from './clientIds.ts';
import { canonicalName, checkHttpUrl, checkIdTokenAlg, checkRedirectUri, checkText } from './validate.ts';

/** A registered OAuth client (its secrets are rows of their own: ClientSecret). */
export type Application = ApplicationRow;

/** One of an app's client secrets: its hash (never rendered), when it was made and last used. */
export type ClientSecret = ClientSecretRow;

/** How many client secrets an app may have at once: the current one and the next, during a rotation. */
export const MAX_CLIENT_SECRETS = 2;

export interface NewApp {
  /** The owner, by login (CLI) or id (settings pages). */
  ownerLogin?: string;
  ownerUserId?: number;
  name: string;
  description: string;
  homepage: string;
  redirectUri: string;
  /** `RS256` or `ES256`; RS256 unless given (DEFAULT_ID_TOKEN_ALG). */
  idTokenAlg?: string | undefined;
  /** false: the operator lets this confidential client leave out PKCE (admin CLI only). */
  pkceRequired?: boolean | undefined;
}

export interface AppDetails {
  name?: string;
  description?: string;
  homepage?: string;
  redirectUri?: string;
  /** id_token_signed_response_alg: `RS256` or `ES256`. */
  idTokenAlg?: string;
}

/**
 * How a client's ID tokens are signed unless it registers otherwise: RS256, the default of OpenID
 * Connect Dynamic Client Registration 1.0 (2), which every relying-party library accepts.
 */
export const DEFAULT_ID_TOKEN_ALG = 'RS256';

/** The plaintext client secret exists only in this return value: show it once. */
export interface AppWithSecret {
  app: Application;
  clientSecret: string;
}

const CLIENT_SECRET_PREFIX = 'cs';

function checkDetails(input: AppDetails) {
  return {
    ...(input.name !== undefined ? { name: checkText('name', input.name, { max: 100 }) } : {}),
    ...(input.description !== undefined
      ? { description: checkText('description', input.description, { min: 0, max: 1000 }) }
      : {}),
    ...(input.homepage !== undefined ? { homepage: checkHttpUrl('homepage', input.homepage) } : {}),
    ...(input.redirectUri !== undefined ? { redirect_uri: checkRedirectUri('redirect_uri', input.redirectUri) } : {}),
    ...(input.idTokenAlg !== undefined
      ? { id_token_signed_response_alg: checkIdTokenAlg('id_token_signed_response_alg', input.idTokenAlg) }
      : {}),
  };
}

async function ownerId(db: Knex, input: Pick<NewApp, 'ownerLogin' | 'ownerUserId'>): Promise<number> {
  if (input.ownerUserId !== undefined) return input.ownerUserId;
  const owner = input.ownerLogin ? await findUserRowByLogin(db, canonicalName(input.ownerLogin)) : undefined;
  if (!owner) throw userNotFound(input.ownerLogin ?? '');
  return owner.id;
}

/** Registers an app and returns it with its client secret (stored only as a SHA-256 hash). */
export async function createApp(ctx: DbContext, input: NewApp & { creationNonce?: string }): Promise<AppWithSecret> {
  const details = checkDetails(input);
  const owner_user_id = await ownerId(ctx.db, input);
  const clientSecret = newToken(CLIENT_SECRET_PREFIX);
  const row = {
    client_id: newClientId(),
    owner_user_id,
    name: details.name!,
    description: details.description!,
    homepage: details.homepage!,
    redirect_uri: details.redirect_uri!,
    id_token_signed_response_alg: details.id_token_signed_response_alg ?? DEFAULT_ID_TOKEN_ALG,
    pkce_required: input.pkceRequired ?? true,
    created_at: Date.now(),
    creation_nonce: input.creationNonce ?? null,
  };
  const id = await insertApp(ctx.db, row, hashToken(clientSecret));
  return { app: { id, ...row }, clientSecret };
}

/**
 * Registers an app once per registration form (its one-time nonce): the same form submitted again
 * (the back button, a double click) answers the app it created, without a secret (shown only once).
 */
export async function createAppOnce(
  ctx: DbContext,
  input: NewApp & { ownerUserId: number },
  nonce: string,
): Promise<AppWithSecret | { app: Application; clientSecret: null }> {
  const earlier = async () => {
    const app = await findAppRowByNonce(ctx.db, input.ownerUserId, nonce);
    return app ? { app, clientSecret: null } : undefined;
  };
  const found = await earlier();
  if (found) return found;
  try {
    return await createApp(ctx, { ...input, creationNonce: nonce });
  } catch (err) {
    // Two submissions at once: the other one's insert won the unique (owner, nonce).
    const raced = isUniqueViolation(err) ? await earlier() : undefined;
    if (raced) return raced;
    throw err;
  }
}

/**
 * A client that registers itself (RFC 7591, registration kind `dynamic`) or is described by a
 * metadata document (`metadata_document`): no owner, its metadata checked by the caller (the
 * OAuth domain knows the rules). A confidential one gets a client secret, a public one
 * (`tokenEndpointAuthMethod` none) none, and PKCE is required of either.
 */
export interface NewRegisteredApp {
  kind: 'dynamic' | 'metadata_document';
  /** Its client_id when the caller chooses it (a metadata document's URL); a new random one otherwise. */
  clientId?: string;
  name: string;
  /** client_uri, or ''. */
  homepage: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  idTokenAlg: string;
  /** The other registered metadata, stored as JSON. */
  metadata: Record<string, unknown>;
  /** SHA-256 of its registration access token (RFC 7592), or null. */
  registrationAccessTokenHash: string | null;
}

function registeredRow(input: NewRegisteredApp) {
  return {
    name: input.name,
    homepage: input.homepage,
    redirect_uri: input.redirectUris[0] ?? '',
    redirect_uris: JSON.stringify(input.redirectUris),
    token_endpoint_auth_method: input.tokenEndpointAuthMethod,
    id_token_signed_response_alg: input.idTokenAlg,
    client_metadata: JSON.stringify(input.metadata),
  };
}

/** Registers a client without an owner; the plaintext client secret (null for a public client) exists only in the answer. */
export async function createRegisteredApp(
  ctx: DbContext,
  input: NewRegisteredApp,
): Promise<{ app: Application; clientSecret: string | null }> {
  const clientSecret = input.tokenEndpointAuthMethod === 'none' ? null : newToken(CLIENT_SECRET_PREFIX);
  const row = {
    client_id: input.clientId ?? newClientId(),
    owner_user_id: null,
    description: '',
    ...registeredRow(input),
    pkce_required: true,
    created_at: Date.now(),
    creation_nonce: null,
    registration_kind: input.kind,
    registration_access_token_hash: input.registrationAccessTokenHash,
  };
  const id = await insertApp(ctx.db, row, clientSecret === null ? null : hashToken(clientSecret));
  return { app: { id, ...row }, clientSecret };
}

/** Replaces a registered client's metadata (RFC 7592 2.2); its client_id, secrets and kind stay. */
export async function replaceRegisteredApp(
  ctx: DbContext,
  appId: number,
  input: Omit<NewRegisteredApp, 'kind' | 'clientId' | 'registrationAccessTokenHash'>,
): Promise<void> {
  await updateAppDetails(
    ctx.db,
    appId,
    registeredRow({ ...input, kind: 'dynamic', registrationAccessTokenHash: null }),
  );
}

/** Deletes a client without an owner with every grant and token issued to it; answers once no process honours them. */
export async function deleteRegisteredApp(ctx: DbContext, appId: number): Promise<void> {
  await deleteAppRow(ctx.db, appId);
  await revocationLease.settle();
}

/** The clients of one registration kind (`dynamic`...), oldest first. */
export async function listAppsOfKind(ctx: DbContext, kind: string): Promise<Application[]> {
  return listAppRowsOfKind(ctx.db, kind);
}

export async function findAppByClientId(ctx: DbContext, clientId: string): Promise<Application | undefined> {
  // A metadata document's URL is stored under a client_id derived from it (metadataDocumentApps.ts).
  return findAppRowByClientId(ctx.db, storedClientIdOf(clientId));
}

/** One of the owner's apps, or a 404 for apps that do not exist or belong to someone else. */
export async function getAppOfOwner(ctx: DbContext, ownerUserId: number, appId: number): Promise<Application> {
  const app = await findAppRowOfOwner(ctx.db, ownerUserId, appId);
  if (!app) throw applicationNotFound(appId);
  return app;
}

/**
 * The secret among `secrets` that `secret` is (RFC 6749 2.3.1): its hash is compared with every
 * stored hash in constant time, without stopping at a match.
 */
export function matchClientSecret<T extends Pick<ClientSecret, 'secret_hash'>>(
  secrets: readonly T[],
  secret: string,
): T | undefined {
  const hash = hashToken(secret);
  let match: T | undefined;
  for (const s of secrets) if (safeEqual(hash, s.secret_hash) && !match) match = s;
  return match;
}

/** How stale a secret's last-used time may get before a use writes it again: one write an hour at most. */
const LAST_USED_RESOLUTION_MS = 60 * 60_000;

/**
 * Whether `secret` is one of `secrets` (an app's, however they were read: on their own, or along
 * with a code or refresh token), recording its use when the stored time is over an hour old.
 */
export async function clientSecretMatches(
  ctx: DbContext,
  secrets: readonly Pick<ClientSecret, 'id' | 'secret_hash' | 'last_used_at'>[],
  secret: string,
): Promise<boolean> {
  const match = matchClientSecret(secrets, secret);
  const now = Date.now();
  if (match && (match.last_used_at === null || now - match.last_used_at > LAST_USED_RESOLUTION_MS))
    await markClientSecretUsed(ctx.db, match.id, now);
  return match !== undefined;
}

/** Whether `secret` is one of the app's client secrets (recording its use). */
export async function verifyClientSecret(ctx: DbContext, applicationId: number, secret: string): Promise<boolean> {
  return clientSecretMatches(ctx, await listClientSecretRows(ctx.db, applicationId), secret);
}

export async function listClientSecrets(ctx: DbContext, ownerUserId: number, appId: number): Promise<ClientSecret[]> {
  return clientSecretsOf(ctx, await getAppOfOwner(ctx, ownerUserId, appId));
}

/** The client secrets of an app the caller already holds (found through its owner or its client_id). */
export async function clientSecretsOf(ctx: DbContext, app: Pick<Application, 'id'>): Promise<ClientSecret[]> {
  return listClientSecretRows(ctx.db, app.id);
}

/** A client secret just added: its row id, and how many secrets the app has with it. */
export interface AddedClientSecret extends AppWithSecret {
  secretId: number;
  secretCount: number;
}

/**
 * A new client secret for the app; the ones it has keep working until deleted, so a deployment
 * switches without downtime (as GitHub). Two at most: delete one before making a third.
 */
export async function addClientSecret(ctx: DbContext, ownerUserId: number, appId: number): Promise<AddedClientSecret> {
  const app = await getAppOfOwner(ctx, ownerUserId, appId);
  const existing = (await listClientSecretRows(ctx.db, app.id)).length;
  if (existing >= MAX_CLIENT_SECRETS) throw tooManyClientSecrets(app.name, MAX_CLIENT_SECRETS);
  const clientSecret = newToken(CLIENT_SECRET_PREFIX);
  const secretId = await insertClientSecret(ctx.db, app.id, hashToken(clientSecret), Date.now());
  return { app, clientSecret, secretId, secretCount: existing + 1 };
}

/**
 * Deletes one client secret: clients presenting it are refused from then on. The last one goes
 * only with `evenTheLast` (the app then cannot obtain tokens until a new secret is generated).
 * Answers how many secrets the app has left.
 */
export async function deleteClientSecret(
  ctx: DbContext,
  ownerUserId: number,
  appId: number,
  secretId: number,
  options: { evenTheLast?: boolean } = {},
): Promise<number> {
  const app = await getAppOfOwner(ctx, ownerUserId, appId);
  const secrets = await listClientSecretRows(ctx.db, app.id);
  if (!secrets.some((s) => s.id === secretId)) throw clientSecretNotFound(secretId, app.name);
  if (secrets.length === 1 && !options.evenTheLast) {
    throw lastClientSecret(app.name, 'Generate a new one first, or confirm deleting the last one.');
  }
  await deleteClientSecretRow(ctx.db, app.id, secretId);
  return secrets.length - 1;
}

export async function updateApp(
  ctx: DbContext,
  ownerUserId: number,
  appId: number,
  input: AppDetails,
): Promise<Application> {
  const details = checkDetails(input);
  const app = await getAppOfOwner(ctx, ownerUserId, appId);
  if (Object.keys(details).length) await updateAppDetails(ctx.db, app.id, details);
  return { ...app, ...details };
}

/**
 * The operator's choice (admin CLI, not the owner's settings): whether the authorize endpoint
 * requires PKCE of this confidential client. Codes already issued keep their challenge, or none.
 */
export async function setPkceRequired(ctx: DbContext, appId: number, required: boolean): Promise<void> {
  await updateAppDetails(ctx.db, appId, { pkce_required: required });
}

/**
 * The owner's choice (the application's settings): whether the authorize endpoint takes only
 * pushed authorization requests from this client (RFC 9126 6).
 */
export async function setRequirePushedAuthorizationRequests(
  ctx: DbContext,
  ownerUserId: number,
  appId: number,
  required: boolean,
): Promise<void> {
  const app = await getAppOfOwner(ctx, ownerUserId, appId);
  await updateAppDetails(ctx.db, app.id, { require_pushed_authorization_requests: required });
}

/** Deletes the app with every grant and token issued to it; answers once no process honours them. */
export async function deleteApp(ctx: DbContext, ownerUserId: number, appId: number): Promise<void> {
  const app = await getAppOfOwner(ctx, ownerUserId, appId);
  await deleteAppRow(ctx.db, app.id);
  await revocationLease.settle();
}

export async function listAppsForOwner(ctx: DbContext, ownerUserId: number): Promise<Application[]> {
  return listAppRowsOfOwner(ctx.db, ownerUserId);
}
