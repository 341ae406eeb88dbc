import { readFile } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specPath } from '../app.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createFixture, discover, obtainTokens } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { createApiClient } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { logInPage } from '../../test/support/chromium.ts';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

describe('what operators and integrators find: landing page, API reference, spec, metrics', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer({ runs: true, env: { METRICS_TOKEN } });
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('GET / is a landing page linking sign-in, settings and the API reference (not a JSON 404)', async () => {
    const res = await fetch(`${server.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const body = await res.text();
    for (const href of ['/login', '/settings/applications', '/docs', '/openapi.yaml'])
      expect(body).toContain(`href="${href}"`);
  });

  it('GET /openapi.yaml serves the contract the service validates against', async () => {
    const res = await fetch(`${server.baseUrl}/openapi.yaml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(await res.text()).toBe(await readFile(specPath, 'utf8'));
  });

  it('GET /docs renders the API reference in a real browser from the bundled Redoc, under the CSP (which lets its logo in, and nothing else off the service), axe clean', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    // Redoc's sidebar footer always shows Redocly's logo from their CDN: the CSP allows that one
    // image (the browser here has no network, so its load fails and Redoc hides it). Nothing else
    // may fail, no CSP may refuse anything, and no other request may leave the service.
    const logo = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
    page.on(
      'console',
      (m) =>
        m.type() === 'error' &&
        !(m.location().url === logo && /Failed to load/.test(m.text())) &&
        problems.push(`${m.text()} ${m.location().url}`),
    );
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => {
      if (!r.url().startsWith(server.baseUrl) && !/^(data|blob):/.test(r.url()) && r.url() !== logo)
        problems.push(`request off the service: ${r.url()}`);
    });
    const res = await page.goto(`${server.baseUrl}/docs`);
    expect(res!.headers()['content-security-policy']).toMatch(/img-src 'self' data: https:\/\/cdn\.redoc\.ly;/);
    await page.getByText('Open Authorization and Workflows Service').first().waitFor({ timeout: 20_000 });
    // An operation of the contract is listed in the navigation.
    await page.getByText('/api/workflows').first().waitFor({ timeout: 20_000 });
    await page.screenshot({ path: 'artifacts/e2e/docs.png' }).catch(() => {});
    // Redoc's own markup is held to WCAG 2.1 A/AA (test/support/axe.ts); its scrolling code samples take focus (/docs/docs.js).
    expect(await axeViolations(page, { wcagOnly: true })).toEqual([]);
    await page.close();
    expect(problems).toEqual([]);
  });

  it('the landing page says who is signed in (not "Sign in") once they are, and the service has an icon', async () => {
    const f = await createFixture(server.ctx.db);
    const page = await browser.newPage();
    const missing: string[] = [];
    page.on('response', (r) => r.status() >= 400 && missing.push(`${r.status()} ${r.url()}`));
    await page.goto(`${server.baseUrl}/`);
    expect(await page.locator('main a[href="/login"]').textContent()).toBe('Sign in');
    expect(await axeViolations(page)).toEqual([]);
    await logInPage(page, server.baseUrl, f.login, f.password);
    await page.goto(`${server.baseUrl}/`);
    expect(await page.locator('main').textContent()).toContain(`Signed in as ${f.login}`);
    expect(await page.locator('main a[href="/login"]').count()).toBe(0);
    expect(await page.locator('header nav a[href="/docs"]').textContent()).toBe('API reference');
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
    expect(missing).toEqual([]);
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const icon = await fetch(`${server.baseUrl}${path}`);
      expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml; charset=utf-8']);
    }
  });

  it('GET /metrics needs the METRICS_TOKEN bearer (401 without it, compared in constant time)', async () => {
    expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${server.baseUrl}/metrics`, {
      headers: { Authorization: 'Bearer metrics-token-for-tests-0123456788' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('GET /metrics exports HTTP latency by route and status, token grants by type and outcome, runs by status and duration, queue depth and pool use', async () => {
    const f = await createFixture(server.ctx.db);
    await obtainTokens(server.baseUrl, await discover(server.baseUrl), f, 'user_info'); // one granted authorization_code exchange
    await fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'ghr_not-a-token',
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    });
    await fetch(`${server.baseUrl}/api/workflows/wf_nope`, { headers: { Authorization: 'Bearer sk_nope' } });
    // One run through the real queue and worker, to completion.
    const { token } = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'metrics',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    const api = createApiClient(server.baseUrl, { bearer: token });
    const { data: workflow } = await api.POST('/api/workflows', { body: { name: 'metrics', ...seedGraph('echo') } });
    const { data: run } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflow!.data.id } },
      body: { inputs: { ticket: 'hi' } },
    });
    for (let i = 0; i < 150; i++) {
      const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
        params: { path: { workflow_id: workflow!.data.id, run_id: run!.data.id } },
      });
      if (data!.data.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const res = await fetch(`${server.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/workflows\/\{workflow_id\}",status_code="401"\} [1-9]/,
    );
    expect(text).toMatch(/oauth_token_grants_total\{grant_type="authorization_code",outcome="granted"\} [1-9]/);
    expect(text).toMatch(/oauth_token_grants_total\{grant_type="refresh_token",outcome="invalid_grant"\} [1-9]/);
    expect(text).toMatch(/workflow_runs\{status="queued"\} \d+/);
    expect(text).toMatch(/workflow_runs\{status="completed"\} [1-9]/);
    expect(text).toMatch(/workflow_run_duration_seconds_count\{status="completed"\} [1-9]/);
    expect(text).toMatch(/db_pool_connections\{state="used"\} \d+/);
    expect(text).toMatch(/db_pool_max_connections \d+/);
    expect(text).toMatch(/workflow_compute_calls\{state="waiting"\} \d+/);
    expect(text).toMatch(/workflow_compute_limits_total\{kind="memory"\} \d+/);
    expect(text).not.toMatch(/route="\/api\/workflows\/wf_nope"/); // templates, never raw paths
  });
});
