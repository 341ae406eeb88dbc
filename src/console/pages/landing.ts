// What a person who opens the service's address expects to find: a landing page at `/` (sign in,
// settings, the API reference), the API reference at `/docs` (Redoc, served from the npm package
// `redoc`, no CDN) and the contract itself at `/openapi.yaml`. Not API operations: not in openapi.yaml.
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';
import type { AppContext } from '../../context.ts';
import { html } from '../../html/html.ts';
import { pageUser } from './common.ts';
import { sessionMiddleware } from '../../accounts/session.ts';
import type { PageUser } from '../views/format.ts';
import { layout } from '../../html/layout.ts';

const redocBundle = path.join(
  path.dirname(createRequire(import.meta.url).resolve('redoc/package.json')),
  'bundles',
  'redoc.standalone.js',
);

/** The landing page; for a signed-in visitor, the console's header and who they are instead of "Sign in". */
function landing(baseUrl: string, user?: PageUser): string {
  return String(
    layout(
      { title: 'OpenAuth Workflows', user },
      html`<h1>OpenAuth Workflows</h1>
<p>An OAuth 2.0 provider with open token interfaces, and a REST API that stores and runs ML workflows.</p>
<ul class="links">
<li>${user ? html`Signed in as <strong>${user.login}</strong>` : html`<a href="/login">Sign in</a>`}</li>
<li><a href="/workflows">Workflows</a>: your workflows drawn as graphs, a form to run each, and every run node by node</li>
<li><a href="/settings/applications">Settings</a>: your applications, access tokens (API keys) and authorized apps</li>
<li><a href="/docs">API reference</a> (from <a href="/openapi.yaml">openapi.yaml</a>, OpenAPI 3.1)</li>
<li><a href="/.well-known/oauth-authorization-server">Authorization server metadata</a> (RFC 8414), <a href="/.well-known/openid-configuration">OpenID Provider metadata</a> and <a href="/.well-known/jwks.json">signing keys</a></li>
</ul>
<p>Issuer: <code>${baseUrl}</code></p>`,
    ),
  );
}

/**
 * Redoc renders `<redoc spec-url>` itself once its bundle loads: no inline script, so helmet's CSP
 * stands. /docs/docs.js makes its scrolling code samples focusable.
 */
const DOCS = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · OpenAuth Workflows</title><link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>body{margin:0}</style></head>
<body><redoc spec-url="/openapi.yaml"></redoc><script src="/docs/redoc.standalone.js"></script><script src="/docs/docs.js"></script></body></html>`;

/**
 * Redoc's code samples scroll sideways in a <pre> that cannot take focus, so a keyboard cannot
 * scroll them (axe: scrollable-region-focusable, WCAG 2.1.1): each one gets tabindex=0 as Redoc
 * renders it.
 */
const DOCS_SCRIPT = `const focusable = () => { for (const pre of document.querySelectorAll('redoc pre:not([tabindex])')) pre.tabIndex = 0; };
new MutationObserver(focusable).observe(document.body, { childList: true, subtree: true });
`;

/** The service's icon (the console's accent colour, a key's ring and bit), for every page and the browser's /favicon.ico. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0969da"/><circle cx="12" cy="16" r="6" fill="none" stroke="#fff" stroke-width="3"/><path d="M18 16h10M24 16v5M28 16v4" stroke="#fff" stroke-width="3" fill="none"/></svg>`;

/** Landing page, docs and icons are public and the same for everyone: a browser may keep them a while. */
const sendIcon = (res: express.Response) =>
  res.type('image/svg+xml').set('Cache-Control', 'public, max-age=86400').send(FAVICON);

/** Every path landingPagesRouter serves (any case, an optional trailing slash, as Express routes): pages' security headers. */
export const landingPagePaths =
  /^\/(docs|docs\/docs\.js|docs\/redoc\.standalone\.js|favicon\.svg|favicon\.ico|openapi\.yaml)?\/?$/i;

export function landingPagesRouter(ctx: AppContext, specPath: string): Router {
  const router = express.Router();
  router.get('/', sessionMiddleware(ctx), async (req, res) => {
    const user = req.webSession?.uid ? await pageUser(ctx, req) : undefined;
    res.type('html').set('Cache-Control', 'no-store').send(landing(ctx.config.BASE_URL, user));
  });
  router.get('/docs', (_req, res) => {
    // Redoc runs its search index in a Web Worker it creates from a blob: URL, and its sidebar
    // always shows Redocly's logo from their CDN (a hard-coded <img>): allowed here, and only here.
    const csp = res.getHeader('Content-Security-Policy');
    if (typeof csp === 'string') {
      const images = csp.replace(/img-src [^;]*/, (directive) => `${directive} https://cdn.redoc.ly`);
      res.setHeader('Content-Security-Policy', `${images};worker-src 'self' blob:`);
    }
    res.type('html').send(DOCS);
  });
  router.get('/docs/docs.js', (_req, res) => {
    res.type('js').set('Cache-Control', 'public, max-age=3600').send(DOCS_SCRIPT);
  });
  router.get(['/favicon.svg', '/favicon.ico'], (_req, res) => sendIcon(res));
  router.get('/docs/redoc.standalone.js', (_req, res) => {
    res.sendFile(redocBundle, { maxAge: '1d' });
  });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').sendFile(specPath);
  });
  return router;
}
