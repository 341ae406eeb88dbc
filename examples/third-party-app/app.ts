// The example third-party app: "Sign in with OpenAuth", then the user's profile, namespaces and
// access tokens through the service's typed client, a proxy token for one access token, and a
// call to the serverless gateway with it.
import cookieParser from 'cookie-parser';
import express, { type NextFunction, type Request, type Response } from 'express';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createApiClient } from 'openauth-workflows/client';
import type { ExampleConfig } from './config.ts';
import { describeOAuthError, oauthClient, type OAuthClient } from './oauth.ts';
import { sessionStore, type SessionData, type SessionStore } from './session.ts';
import * as views from './views.ts';

/** Refresh the access token this long before it expires. */
const REFRESH_MARGIN_MS = 60_000;
const REVOKED_NOTICE =
  "The service no longer accepts this app's sign-in (HTTP 401): you revoked the app, or the sign-in expired. Sign in again.";

type AsyncHandler = (req: Request, res: Response) => Promise<void>;
const route = (handler: AsyncHandler) => (req: Request, res: Response, next: NextFunction) =>
  handler(req, res).catch(next);

function send(res: Response, status: number, body: string): void {
  res.status(status).type('html').send(body);
}

function proxyView(proxy: NonNullable<SessionData['proxy']>): views.ProxyView {
  const header = decodeProtectedHeader(proxy.token);
  return {
    namespace: proxy.namespace,
    id: proxy.id,
    name: proxy.name,
    usageScenario: proxy.usageScenario,
    alg: String(header.alg),
    typ: String(header.typ ?? ''),
    kid: String(header.kid ?? ''),
    expiresAt: proxy.expiresAt,
  };
}

export function createExampleApp(config: ExampleConfig, client: OAuthClient = oauthClient(config)): express.Express {
  const store: SessionStore = sessionStore(config.sessionSecret, new URL(config.redirectUri).protocol === 'https:');
  const app = express();
  app.disable('x-powered-by');
  app.use(cookieParser());
  app.use(express.urlencoded({ extended: false, limit: '16kb' }));
  app.use((_req, res, next) => {
    res.set({
      'Content-Security-Policy':
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      'X-Content-Type-Options': 'nosniff',
      // The callback URL carries the authorization code: never send it on as a Referer.
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    });
    next();
  });

  /** The session's access token, refreshed (with rotation) when about to expire; undefined when signed out. */
  async function accessToken(session: SessionData, res: Response): Promise<string | undefined> {
    const tokens = session.tokens;
    if (!tokens) return undefined;
    if (tokens.expiresAt - REFRESH_MARGIN_MS > Date.now()) return tokens.accessToken;
    if (!tokens.refreshToken) return undefined;
    try {
      const refreshed = await client.refresh(tokens.refreshToken);
      session.tokens = {
        accessToken: refreshed.access_token,
        refreshToken: refreshed.refresh_token ?? tokens.refreshToken,
        expiresAt: Date.now() + (refreshed.expires_in ?? 3600) * 1000,
        scope: refreshed.scope ?? tokens.scope,
      };
    } catch {
      delete session.tokens;
    }
    await store.write(res, session);
    return session.tokens?.accessToken;
  }

  app.get('/app.css', (_req, res) => {
    res.type('css').set('Cache-Control', 'public, max-age=3600').send(views.STYLESHEET);
  });

  app.get('/healthz', (_req, res) => {
    res.type('text').send('ok');
  });

  app.get(
    '/',
    route(async (req, res) => {
      const session = await store.read(req);
      const now = Date.now();
      const proxy = session.proxy ? proxyView(session.proxy) : undefined;
      const bearer = await accessToken(session, res);
      if (!bearer) return send(res, 200, views.signedOutPage(undefined, proxy, now));

      const api = createApiClient(config.serviceUrl, { bearer });
      const me = await api.GET('/api/open/v1/userinfo');
      if (!me.data) {
        if (me.response.status !== 401) throw new Error(`userinfo answered HTTP ${me.response.status}`);
        delete session.tokens;
        await store.write(res, session);
        return send(res, 200, views.signedOutPage(REVOKED_NOTICE, proxy, now));
      }
      const orgs = await api.GET('/api/open/v1/orgs');
      // The personal namespace is the user's login; each organization has its own.
      const namespaces: Array<Pick<views.NamespaceTokens, 'namespace' | 'kind'>> = [
        { namespace: me.data.login, kind: 'personal' },
        ...(orgs.data ?? []).map((o) => ({ namespace: o.namespace, kind: 'organization' as const })),
      ];
      const withTokens = await Promise.all(
        namespaces.map(async (ns): Promise<views.NamespaceTokens> => {
          const list = await api.GET('/api/open/v1/{namespace}/tokens', {
            params: { path: { namespace: ns.namespace } },
          });
          if (list.data) return { ...ns, tokens: list.data };
          const detail = list.error && 'detail' in list.error ? String(list.error.detail) : '';
          return { ...ns, tokens: [], error: `HTTP ${list.response.status} ${detail}`.trim() };
        }),
      );
      send(res, 200, views.homePage(me.data, withTokens, proxy, now));
    }),
  );

  app.get(
    '/login',
    route(async (_req, res) => {
      let start;
      try {
        start = await client.authorizationUrl();
      } catch (err) {
        return send(
          res,
          502,
          views.messagePage(
            'Cannot reach the service',
            `Discovery at ${config.serviceUrl} failed: ${describeOAuthError(err)}`,
          ),
        );
      }
      // A fresh session: whatever was signed in before is replaced by this sign-in.
      await store.write(res, { flow: { state: start.state, codeVerifier: start.codeVerifier } });
      res.redirect(302, start.url.toString());
    }),
  );

  app.get(
    '/callback',
    route(async (req, res) => {
      const session = await store.read(req);
      if (!session.flow)
        return send(
          res,
          400,
          views.messagePage(
            'Sign-in not started here',
            'This browser has no sign-in in progress with this app (or it expired). Start again.',
          ),
        );
      const callbackUrl = new URL(req.originalUrl, config.redirectUri);
      let tokens;
      try {
        tokens = await client.exchangeCode(callbackUrl, session.flow);
      } catch (err) {
        await store.write(res, {});
        return send(res, 400, views.messagePage('Sign-in failed', describeOAuthError(err)));
      }
      await store.write(res, {
        tokens: {
          accessToken: tokens.access_token,
          ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
          expiresAt: Date.now() + (tokens.expires_in ?? 3600) * 1000,
          scope: tokens.scope ?? '',
        },
      });
      res.redirect(303, '/');
    }),
  );

  // POST forms below rely on the session cookie being SameSite=Lax: a cross-site form post arrives
  // without it, as a signed-out request.
  app.post(
    '/logout',
    route(async (req, res) => {
      const session = await store.read(req);
      const token = session.tokens?.refreshToken ?? session.tokens?.accessToken;
      store.clear(res);
      if (token) await client.revoke(token).catch(() => undefined); // best effort (RFC 7009)
      res.redirect(303, '/');
    }),
  );

  app.post(
    '/proxy-token',
    route(async (req, res) => {
      const session = await store.read(req);
      const bearer = await accessToken(session, res);
      if (!bearer) return res.redirect(303, '/');
      const body = req.body as Record<string, unknown>;
      const namespace = typeof body.namespace === 'string' ? body.namespace : '';
      const id = Number(body.id);
      if (!namespace || !Number.isSafeInteger(id) || id < 1)
        return send(res, 400, views.messagePage('Bad request', 'Pick a token from the list.', true));

      const api = createApiClient(config.serviceUrl, { bearer });
      const { data, error, response } = await api.GET('/api/open/v1/{namespace}/tokens/{id}', {
        params: { path: { namespace, id } },
      });
      if (!data) {
        if (response.status === 401) {
          delete session.tokens;
          await store.write(res, session);
          return send(res, 401, views.signedOutPage(REVOKED_NOTICE, undefined, Date.now()));
        }
        const detail = error && 'detail' in error ? String(error.detail) : '';
        return send(
          res,
          response.status,
          views.messagePage('No proxy token', `The service answered HTTP ${response.status}. ${detail}`, true),
        );
      }
      decodeJwt(data.proxy_access_token); // it is a JWT; throws otherwise
      session.proxy = {
        namespace,
        id: data.id,
        name: data.name,
        usageScenario: data.usage_scenario,
        token: data.proxy_access_token,
        // expires_in is authoritative (openapi.yaml); the JWT's exp says the same.
        expiresAt: Date.now() + data.expires_in * 1000,
      };
      await store.write(res, session);
      res.redirect(303, '/#proxy');
    }),
  );

  app.post(
    '/ask',
    route(async (req, res) => {
      const session = await store.read(req);
      const signedIn = Boolean(session.tokens);
      const prompt = String((req.body as Record<string, unknown>).prompt ?? '')
        .trim()
        .slice(0, 2000);
      if (!session.proxy)
        return send(
          res,
          400,
          views.messagePage('No proxy token', 'Pick an access token on the home page first.', signedIn),
        );
      if (!prompt)
        return send(res, 400, views.messagePage('Nothing to ask', 'Write a question for the gateway.', signedIn));

      const gateway = createApiClient(config.serviceUrl, { bearer: session.proxy.token });
      let outcome: views.GatewayOutcome;
      try {
        const { data, error, response } = await gateway.POST('/serverless/v1/chat/completions', {
          body: { model: 'echo', messages: [{ role: 'user', content: prompt }] },
        });
        // Without `stream: true` the answer is the JSON completion (the other 200 is the event stream).
        if (data && 'choices' in data)
          outcome = { ok: true, content: data.choices[0]?.message.content ?? '', model: data.model, usage: data.usage };
        else {
          const body = (error ?? {}) as { error?: { message?: string; code?: string | null } };
          outcome = {
            ok: false,
            status: response.status,
            code: body.error?.code ?? null,
            message: body.error?.message ?? response.statusText,
          };
        }
      } catch (err) {
        outcome = {
          ok: false,
          status: 0,
          code: null,
          message: `Could not reach the gateway: ${(err as Error).message}`,
        };
      }
      const proxy = proxyView(session.proxy);
      if (!outcome.ok && outcome.status === 401) {
        // Dead for good: the authorization or the access token behind it is gone.
        delete session.proxy;
        await store.write(res, session);
      }
      send(
        res,
        200,
        views.answerPage(
          signedIn,
          outcome.ok || outcome.status !== 401 ? proxy : undefined,
          prompt,
          outcome,
          Date.now(),
        ),
      );
    }),
  );

  app.use((_req, res) => send(res, 404, views.messagePage('Not found', 'There is no such page in this app.')));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    console.error('example app error:', err instanceof Error ? err.message : err);
    send(
      res,
      500,
      views.messagePage('Something went wrong', 'The example app could not complete this request; see its console.'),
    );
  });
  return app;
}
