// What a person who opens the service's address expects to find: a landing page at `/` (sign in,
// settings, the API reference), the API reference at `/docs` (Redoc, served from the npm package
// `redoc`, no CDN) and the contract itself at `/openapi.yaml`. Not API operations: not in openapi.yaml.
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';
import type { AppContext } from '../context.ts';
import { html } from '../platform/html.ts';
import { layout } from '../platform/views/layout.ts';

const redocBundle = path.join(path.dirname(createRequire(import.meta.url).resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js');

function landing(baseUrl: string): string {
  return String(layout(
    { title: 'OpenAuth Workflows' },
    html`<h1>OpenAuth Workflows</h1>
<p>An OAuth 2.0 provider with open token interfaces, and a REST API that stores and runs ML workflows.</p>
<ul class="links">
<li><a href="/login">Sign in</a></li>
<li><a href="/workflows">Workflows</a>: your workflows drawn as graphs, a form to run each, and every run node by node</li>
<li><a href="/settings/applications">Settings</a>: your applications, access tokens (API keys) and authorized apps</li>
<li><a href="/docs">API reference</a> (from <a href="/openapi.yaml">openapi.yaml</a>, OpenAPI 3.1)</li>
<li><a href="/.well-known/oauth-authorization-server">Authorization server metadata</a> (RFC 8414) and <a href="/.well-known/jwks.json">signing keys</a></li>
</ul>
<p>Issuer: <code>${baseUrl}</code></p>`,
  ));
}

/** Redoc renders `<redoc spec-url>` itself once its bundle loads: no inline script, so helmet's CSP stands. */
const DOCS = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · OpenAuth Workflows</title><link rel="icon" href="data:,"><style>body{margin:0}</style></head>
<body><redoc spec-url="/openapi.yaml"></redoc><script src="/docs/redoc.standalone.js"></script></body></html>`;

export function opsPagesRouter(ctx: AppContext, specPath: string): Router {
  const router = express.Router();
  router.get('/', (_req, res) => {
    res.type('html').send(landing(ctx.config.BASE_URL));
  });
  router.get('/docs', (_req, res) => {
    // Redoc runs its search index in a Web Worker it creates from a blob: URL.
    const csp = res.getHeader('Content-Security-Policy');
    if (typeof csp === 'string') res.setHeader('Content-Security-Policy', `${csp};worker-src 'self' blob:`);
    res.type('html').send(DOCS);
  });
  router.get('/docs/redoc.standalone.js', (_req, res) => {
    res.sendFile(redocBundle, { maxAge: '1d' });
  });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').sendFile(specPath);
  });
  return router;
}
