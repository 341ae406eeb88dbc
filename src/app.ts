import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import express from 'express';
import helmet from 'helmet';
import cookieParser from 'cookie-parser';
import typeis from 'type-is';
import * as OpenApiValidator from 'express-openapi-validator';
import type { AppContext } from './context.ts';
import { healthOperations } from './http/health.ts';
import { mountOperations, type Operations } from './http/operations.ts';
import { errorHandler, notFoundHandler } from './http/errorHandler.ts';
import { httpLogger } from './http/logger.ts';
import { methodRules } from './http/methods.ts';
import { only } from './http/only.ts';
import { apiRateLimit } from './http/apiRateLimit.ts';
import { apiVersions, loadLegacyReleases } from './http/apiVersions.ts';
import { sharedRateLimiter, type SharedRateLimiter } from './http/sharedRateLimiter.ts';
import { securityHandlers } from './http/security.ts';
// The composition root: the one module that knows every domain and assembles them (src/http
// stays domain-free plumbing).
import { authenticateOAuthAccessToken } from './oauth/accessTokenAuth.ts';
import { dpopVerifier } from './http/dpop.ts';
import { dpopRefusal } from './http/dpopResource.ts';
import { oauthErrors, oauthOperations, oauthPagePaths, oauthPagesRouter } from './oauth/router.ts';
import { authenticateProxyToken, looksLikeJwt } from './open/proxyTokenAuth.ts';
import { openOperations } from './open/router.ts';
import { serverlessErrors, serverlessOperations } from './serverless/router.ts';
import { authenticateApiKey, looksLikeApiKey } from './accounts/apiKeyAuth.ts';
import { platformPageErrors, platformPagePaths, platformPagesRouter } from './console/pages/router.ts';
import { workflowOperations, workflowValidationErrors } from './workflows/router.ts';
import { secretOperations } from './secrets/router.ts';
import { workflowVersionOperations } from './workflows/versionsRouter.ts';
import { endSchedulesOfDeletedWorkflow, scheduleOperations } from './schedules/router.ts';
import { cancelRunsOfDeletedWorkflow, runOperations } from './runs/router.ts';
import { runPageOperations } from './runs/pageRouter.ts';
import { nodeTestOperations } from './runs/nodeTestRouter.ts';
import { approvalOperations } from './runs/approvalRouter.ts';
import { triggerOperations } from './hooks/router.ts';
import { callbackOperations } from './hooks/callbackRouter.ts';
import { budgetOperations } from './runs/budgetRouter.ts';
import { hookBodyParsers } from './hooks/hookBody.ts';
import { httpMetrics, metricsRouter } from './ops/metrics.ts';
import { computeMetrics } from './runs/compute/metrics.ts';
import { landingPagePaths, landingPagesRouter } from './console/pages/landing.ts';
import { principalLease } from './shared/principalLease.ts';
import { mcpRouter } from './mcp/router.ts';

export const specPath = fileURLToPath(new URL('../openapi.yaml', import.meta.url));
const legacyReleases = loadLegacyReleases(fileURLToPath(new URL('../contract-tests/releases/', import.meta.url)));
const apiSpecVersion = (parse(readFileSync(specPath, 'utf8')) as { info: { version: string } }).info.version;

/** Assembles the whole HTTP service: middleware, the contract validator, every domain router. */
export interface RateLimiters {
  /** Per OAuth grant or raw access token on the open, serverless and workflow APIs. */
  api: SharedRateLimiter;
  /** Per client on the token and revocation endpoints. */
  token: SharedRateLimiter;
  /** Failed client authentications per source address on the token and revocation endpoints. */
  tokenFailures: SharedRateLimiter;
  /** Run starts per user (USER_RUNS_PER_MINUTE). */
  runStarts: SharedRateLimiter;
}

/** The app's shared rate limiters, to flush or stop them (tests, shutdown). */
export function rateLimitersOf(app: express.Express): RateLimiters {
  return app.locals.rateLimiters as RateLimiters;
}

/** The handler of every operation of openapi.yaml, by operationId. */
export function operationHandlers(ctx: AppContext, rateLimiters: RateLimiters): Operations {
  return {
    ...healthOperations(ctx),
    ...oauthOperations(ctx, rateLimiters.token, rateLimiters.tokenFailures),
    ...openOperations(ctx),
    ...serverlessOperations(ctx),
    ...workflowOperations(ctx, (id) =>
      Promise.all([cancelRunsOfDeletedWorkflow(ctx)(id), endSchedulesOfDeletedWorkflow(ctx)(id)]),
    ),
    ...workflowVersionOperations(ctx),
    ...scheduleOperations(ctx),
    ...runOperations(ctx, rateLimiters.runStarts),
    ...runPageOperations(ctx),
    ...nodeTestOperations(ctx, rateLimiters.runStarts),
    ...approvalOperations(ctx),
    ...secretOperations(ctx),
    ...triggerOperations(ctx, rateLimiters),
    ...callbackOperations(ctx),
    ...budgetOperations(ctx),
  };
}

/**
 * Security headers. Pages get helmet's full set (no framing, forms post only to us or a client's
 * callback). API answers are JSON, never a document a browser renders for a person: they get the
 * set OWASP's REST Security Cheat Sheet lists for APIs (nothing may load or frame them, no MIME
 * sniffing, HSTS), not the document-only headers (COOP, Origin-Agent-Cluster, DNS prefetch, ...).
 */
function securityHeaders(https: boolean, isPage: (req: express.Request) => boolean): express.RequestHandler {
  const pages = helmet({
    contentSecurityPolicy: {
      directives: {
        'frame-ancestors': ["'none'"],
        // The consent form's answer is a redirect to the client's callback, on any origin.
        'form-action': ["'self'", 'http:', 'https:'],
        'upgrade-insecure-requests': https ? [] : null,
      },
    },
    strictTransportSecurity: https,
  });
  const api = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] },
    },
    crossOriginOpenerPolicy: false,
    originAgentCluster: false,
    referrerPolicy: false,
    strictTransportSecurity: https,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xFrameOptions: { action: 'deny' },
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  });
  return (req, res, next) => (isPage(req) ? pages : api)(req, res, next);
}

/** The contract's gate: security handlers, then request (and, in dev and tests, response) validation. */
function contractValidator(ctx: AppContext, pagePaths: RegExp): express.RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: specPath,
    validateRequests: { allErrors: true },
    validateResponses: ctx.config.RESPONSE_VALIDATION ? { allErrors: true } : false,
    validateSecurity: {
      handlers: securityHandlers(
        {
          oauthAccessToken: (token) => authenticateOAuthAccessToken(ctx, token),
          dpopRefusal: (req, credential, jkt) => dpopRefusal(dpopVerifier(ctx), req, credential, jkt),
          looksLikeApiKey,
          apiKey: (token) => authenticateApiKey(ctx, token),
          looksLikeProxyToken: looksLikeJwt,
          proxyToken: (token) => authenticateProxyToken(ctx, token),
        },
        ctx.config.BASE_URL,
      ),
    },
    validateFormats: true,
    // No operation takes multipart/form-data: skip the upload stage on every request.
    fileUploader: false,
    ignorePaths: pagePaths,
  });
}

export function createApp(ctx: AppContext): express.Express {
  principalLease(ctx); // from now on, revoking calls in this process wait out its lease
  const app = express();
  const rateLimiters: RateLimiters = {
    api: sharedRateLimiter(ctx.db, ctx.logger, 'api:', ctx.config.API_RATE_LIMIT_PER_MINUTE),
    token: sharedRateLimiter(ctx.db, ctx.logger, 'token:', ctx.config.TOKEN_RATE_LIMIT_PER_MINUTE),
    tokenFailures: sharedRateLimiter(ctx.db, ctx.logger, 'token-fail:', ctx.config.TOKEN_FAILED_AUTH_LIMIT_PER_MINUTE),
    runStarts: sharedRateLimiter(ctx.db, ctx.logger, 'runs:', ctx.config.USER_RUNS_PER_MINUTE),
  };
  app.locals.rateLimiters = rateLimiters;
  app.disable('x-powered-by');
  // No automatic weak ETags (a SHA-1 of every JSON body): API answers are no-store or carry their
  // own ETag (a workflow's version), which conditional requests use.
  app.set('etag', false);
  app.set('trust proxy', ctx.config.TRUST_PROXY);

  app.use(httpMetrics());
  app.use(httpLogger(ctx.logger));
  // Server-rendered pages are not part of the API contract: the validator leaves them alone.
  const pagePaths = new RegExp(`${platformPagePaths.source}|${oauthPagePaths.source}`);
  const isPage = (req: express.Request) => pagePaths.test(req.path) || landingPagePaths.test(req.path);
  app.use(securityHeaders(ctx.config.BASE_URL.startsWith('https:'), isPage));
  // A trigger URL takes what webhook senders send, its bytes kept as sent (hooks/hookBody.ts).
  app.use(
    only(
      (req) => req.path.startsWith('/hooks/') && typeis.hasBody(req),
      ...hookBodyParsers(ctx.config.BODY_LIMIT_BYTES),
    ),
  );
  // An API GET skips the body parsers in one step.
  app.use(
    only(
      typeis.hasBody,
      express.json({ limit: ctx.config.BODY_LIMIT_BYTES, type: ['application/json', 'application/*+json'] }),
      express.urlencoded({ extended: false, limit: ctx.config.BODY_LIMIT_BYTES }),
    ),
  );
  app.use(cookieParser());

  // Landing page, API reference, the spec and /metrics: outside the contract (not API operations).
  app.use(landingPagesRouter(ctx, specPath), metricsRouter(ctx, [computeMetrics()]));
  // The MCP server (JSON-RPC, not an API operation): outside the contract, before its validator.
  app.use(mcpRouter(ctx, rateLimiters.runStarts, apiRateLimit(rateLimiters.api, ctx.config.API_RATE_LIMIT_PER_MINUTE)));

  app.use(methodRules(specPath));
  app.use(
    only((req) => pagePaths.test(req.path), oauthPagesRouter(ctx), platformPagesRouter(ctx, rateLimiters.runStarts)),
  );
  // Before the validator: it checks the whole answer, then an older release's client gets its shape.
  app.use(apiVersions(legacyReleases, apiSpecVersion));
  app.use(contractValidator(ctx, pagePaths));

  // After the validator's security handlers, which establish whose allowance a request spends.
  app.use(
    ['/api/open/v1', '/api/workflows', '/api/secrets', '/serverless', '/api/access-tokens'],
    apiRateLimit(rateLimiters.api, ctx.config.API_RATE_LIMIT_PER_MINUTE),
  );
  app.use(mountOperations(specPath, operationHandlers(ctx, rateLimiters)));

  app.use(workflowValidationErrors(ctx));
  app.use(notFoundHandler);
  app.use(errorHandler(ctx.logger, [...oauthErrors, serverlessErrors, platformPageErrors]));
  return app;
}
