// The MCP server at /mcp (Streamable HTTP transport, the protocol version the SDK speaks), for a
// client holding an OAuth access token of the `workflows:run` scope. JSON-RPC, not REST: outside
// openapi.yaml and the contract validator, mounted before it (src/app.ts); docs/mcp.md.
//
// Stateless (the SDK's `sessionIdGenerator: undefined`): every POST gets a fresh server and
// transport, and no session lives in a process, so any API process serves any request and a
// restart loses nothing but the calls under way. A call answers on its own request's stream
// (progress, then the result); a client's cancellation, another POST, finds the call through the
// process's table of calls (inFlight.ts), and a client that goes away cancels its call's run.
import express, { type RequestHandler } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppContext } from '../context.ts';
import { dpopVerifier } from '../http/dpop.ts';
import { dpopRefusal } from '../http/dpopResource.ts';
import { authenticateOAuthRequest } from '../http/security.ts';
import {
  PROTECTED_RESOURCES,
  resourceMetadataUrl,
  withRequiredScope,
  withResourceMetadata,
} from '../http/protectedResources.ts';
import type { PrincipalOf } from '../http/principal.ts';
import { authenticateOAuthAccessToken } from '../oauth/accessTokenAuth.ts';
import type { RunStarts } from '../runs/service.ts';
import { hashToken } from '../shared/crypto.ts';
import { insufficientScope, methodNotAllowed } from '../shared/errors.ts';
import { InFlightCalls } from './inFlight.ts';
import { mcpServer } from './server.ts';

export const MCP_PATH = '/mcp';
/** The OAuth scope a token needs here (src/oauth/scopes.ts). */
export const MCP_SCOPE = 'workflows:run';

/** This endpoint as a protected resource (RFC 9728): `{BASE_URL}/mcp`. */
const MCP_RESOURCE = PROTECTED_RESOURCES.find((r) => r.path === MCP_PATH)!;

/**
 * The request's OAuth principal, checked as the contract's `oauth2` scheme checks it (a DPoP-bound
 * token only as `Authorization: DPoP` with a proof for POST {BASE_URL}/mcp): 401 without a valid
 * token (RFC 6750 3.1, RFC 9449 7.1) or with one not issued for `{BASE_URL}/mcp` (RFC 8707; the MCP
 * specification's authorization section), 403 without the scope; each challenge names this
 * resource's metadata (RFC 9728 5.1). Returns the token as sent.
 */
async function authenticate(ctx: AppContext, req: express.Request): Promise<string> {
  const at = { resource: MCP_RESOURCE, baseUrl: ctx.config.BASE_URL };
  const found = await authenticateOAuthRequest(
    req,
    {
      oauthAccessToken: (token) => authenticateOAuthAccessToken(ctx, token),
      dpopRefusal: (request, credential, jkt) => dpopRefusal(dpopVerifier(ctx), request, credential, jkt),
    },
    at,
  );
  if ('refusal' in found) throw withRequiredScope(found.refusal, MCP_SCOPE);
  if (!found.principal.scopes.includes(MCP_SCOPE))
    throw withResourceMetadata(insufficientScope(MCP_SCOPE), resourceMetadataUrl(at.baseUrl, MCP_RESOURCE));
  req.principal = found.principal;
  return found.credential.token;
}

/**
 * Whose calls a cancellation may reach: the token's chain (the sign-in it descends from), which
 * outlives the access token, so a client that refreshed its token while a call ran still cancels
 * it with the new one; a token of no chain (a grant without a code) stands for itself.
 */
function callerKey(principal: PrincipalOf<'oauth'>, token: string): string {
  return principal.chainId === undefined ? `token ${hashToken(token)}` : `chain ${principal.chainId}`;
}

/**
 * `/mcp`: POST carries the JSON-RPC messages; GET (a stream of the server's own requests) and
 * DELETE (a session's end) are 405, as the transport's specification has a stateless server
 * answer. `rateLimit`: the API's per-grant allowance (src/http/apiRateLimit.ts).
 */
export function mcpRouter(ctx: AppContext, runStarts: RunStarts, rateLimit: RequestHandler): express.Router {
  const router = express.Router();
  const inFlight = new InFlightCalls();
  router.all(MCP_PATH, async (req, res, next) => {
    try {
      res.locals.mcpToken = await authenticate(ctx, req);
      if (req.method !== 'POST') throw methodNotAllowed(req.method, MCP_PATH, ['POST']);
      next();
    } catch (err) {
      next(err);
    }
  });
  router.post(MCP_PATH, rateLimit, async (req, res, next) => {
    const principal = req.principal as PrincipalOf<'oauth'>;
    const caller = { userId: principal.userId, key: callerKey(principal, res.locals.mcpToken as string) };
    const server = mcpServer(ctx, runStarts, caller, inFlight);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      if (res.headersSent) ctx.logger.error({ err }, 'MCP request failed after its answer began');
      else next(err);
    }
  });
  return router;
}
