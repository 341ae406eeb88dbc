import type { Request, RequestHandler } from 'express';
import type { AppContext, DbContext } from '../context.ts';
import { hashToken, newToken, safeEqual } from '../shared/crypto.ts';
import {
  invalidClientMetadata,
  invalidRegistrationToken,
  registrationOff,
  OAuthError,
  Problem,
} from '../shared/errors.ts';
import { oauthJson, type ErrorDialect } from '../http/errorDialects.ts';
import {
  createRegisteredApp,
  deleteRegisteredApp,
  findAppByClientId,
  replaceRegisteredApp,
  type Application,
} from '../accounts/apps.ts';
import { checkClientMetadata, type ClientMetadataInput } from './clientMetadata.ts';
import { toClient } from './clients.ts';
import { findLiveRegistrationToken } from './registrationTokens.store.ts';

// Dynamic client registration (RFC 7591) and its management (RFC 7592): a client registers itself
// at POST /api/open/oauth/register when the operator allows it (CLIENT_REGISTRATION), and reads,
// replaces or deletes its registration at its registration_client_uri with the registration access
// token it got then. The token is stored as a SHA-256 hash and never rotated (node-oidc-provider
// can rotate it on each use; a client that loses the answer of a rotation would lose its client).

const REGISTRATION_TOKEN_PREFIX = 'rat';

/** The registration endpoints' errors: RFC 7591 3.2.2's JSON; a request the contract refuses is invalid_client_metadata. */
export const registrationJson: ErrorDialect = {
  realm: 'register',
  send(error, req, res) {
    if (error instanceof Problem && error.status === 415)
      return oauthJson.send(
        new OAuthError('invalid_client_metadata', 'Content-Type must be application/json.', 415),
        req,
        res,
      );
    // The contract's own refusal of a request without a bearer token.
    if (error instanceof Problem && error.status === 401)
      return oauthJson.send(invalidRegistrationToken('A registration access token is required.'), req, res);
    if (error instanceof Problem && error.status === 400) {
      const fields = [...new Set((error.errors ?? []).map((e) => e.pointer.replace(/^\/body\/?/, '') || 'the body'))];
      const detail = fields.length
        ? `Invalid ${fields.join(', ')}.`
        : 'The body must be a JSON object of client metadata.';
      return oauthJson.send(invalidClientMetadata(detail), req, res);
    }
    oauthJson.send(error, req, res);
  },
};

function bearer(req: Request): string | null {
  const match = /^Bearer ([^\s]+)$/i.exec(req.headers.authorization ?? '');
  return match ? match[1]! : null;
}

/** CLIENT_REGISTRATION: off (403), an operator's initial access token (401 without a live one), or open. */
async function checkMayRegister(ctx: AppContext, req: Request): Promise<void> {
  const mode = ctx.config.CLIENT_REGISTRATION;
  if (mode === 'off') throw registrationOff();
  if (mode === 'open') return;
  const token = bearer(req);
  if (!token) throw invalidRegistrationToken('An initial access token is required to register a client.');
  const hash = hashToken(token);
  const found = await findLiveRegistrationToken(ctx.db, hash, ctx.now());
  if (!found || !safeEqual(found.token_hash, hash))
    throw invalidRegistrationToken('The initial access token is unknown or expired.');
}

const registrationClientUri = (ctx: DbContext & { config: { BASE_URL: string } }, clientId: string) =>
  `${ctx.config.BASE_URL}/api/open/oauth/register/${encodeURIComponent(clientId)}`;

/** RFC 7591 3.2.1 / RFC 7592 3: the client's information. */
function clientInformation(ctx: AppContext, app: Application, registrationAccessToken: string) {
  const client = toClient(app);
  const extra = JSON.parse(app.client_metadata ?? '{}') as Record<string, unknown>;
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(Number(app.created_at) / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    id_token_signed_response_alg: app.id_token_signed_response_alg,
    ...extra,
    registration_access_token: registrationAccessToken,
    registration_client_uri: registrationClientUri(ctx, client.clientId),
  };
}

/** POST /api/open/oauth/register (RFC 7591 3.1). */
export function registerClient(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    await checkMayRegister(ctx, req);
    const metadata = checkClientMetadata(req.body as ClientMetadataInput);
    const registrationAccessToken = newToken(REGISTRATION_TOKEN_PREFIX);
    const { app, clientSecret } = await createRegisteredApp(ctx, {
      kind: 'dynamic',
      name: metadata.name,
      homepage: metadata.extra.client_uri ?? '',
      redirectUris: metadata.redirectUris,
      tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod,
      idTokenAlg: metadata.idTokenAlg,
      metadata: metadata.extra,
      registrationAccessTokenHash: hashToken(registrationAccessToken),
    });
    res
      .status(201)
      .set('Cache-Control', 'no-store')
      .json({
        ...clientInformation(ctx, app, registrationAccessToken),
        ...(clientSecret !== null ? { client_secret: clientSecret, client_secret_expires_at: 0 } : {}),
      });
  };
}

/**
 * The dynamically registered client of the path whose registration access token the request
 * bears, compared in constant time on its hash; anything else (no token, another client's, a
 * client registered otherwise, none at all) is the same 401 (RFC 7592 2.1).
 */
async function registeredClient(ctx: AppContext, req: Request): Promise<{ app: Application; token: string }> {
  const token = bearer(req);
  const app = await findAppByClientId(ctx, String(req.params.client_id));
  const stored = app?.registration_kind === 'dynamic' ? app.registration_access_token_hash : null;
  if (!token || !app || !stored || !safeEqual(hashToken(token), stored))
    throw invalidRegistrationToken('The registration access token is invalid.');
  return { app, token };
}

/** GET /api/open/oauth/register/{client_id} (RFC 7592 2.1). */
export function readClientRegistration(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const { app, token } = await registeredClient(ctx, req);
    res.set('Cache-Control', 'no-store').json(clientInformation(ctx, app, token));
  };
}

/**
 * PUT /api/open/oauth/register/{client_id} (RFC 7592 2.2): the metadata replaced as a whole. A
 * public client stays public and a confidential one confidential: a public client has no secret to
 * switch to, and a confidential one turning public would drop client authentication silently.
 */
export function updateClientRegistration(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const { app, token } = await registeredClient(ctx, req);
    const input = req.body as ClientMetadataInput;
    if (input.client_id !== app.client_id) throw invalidClientMetadata("client_id must be the client's own.");
    const metadata = checkClientMetadata(input);
    const wasPublic = app.token_endpoint_auth_method === 'none';
    if (wasPublic !== (metadata.tokenEndpointAuthMethod === 'none'))
      throw invalidClientMetadata(
        'token_endpoint_auth_method cannot change between none and a client secret method; register a new client.',
      );
    const fields = {
      name: metadata.name,
      homepage: metadata.extra.client_uri ?? '',
      redirectUris: metadata.redirectUris,
      tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod,
      idTokenAlg: metadata.idTokenAlg,
      metadata: metadata.extra,
    };
    await replaceRegisteredApp(ctx, app.id, fields);
    const updated = (await findAppByClientId(ctx, app.client_id))!;
    res.set('Cache-Control', 'no-store').json(clientInformation(ctx, updated, token));
  };
}

/** DELETE /api/open/oauth/register/{client_id} (RFC 7592 2.3): the client, its grants and tokens are gone. */
export function deleteClientRegistration(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const { app } = await registeredClient(ctx, req);
    await deleteRegisteredApp(ctx, app.id);
    res.status(204).end();
  };
}
