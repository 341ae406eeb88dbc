import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture } from '../../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import type { Grant } from './grant.ts';
import { GRANTS, GRANT_TYPES, grantMetricsLabel, grantsMetadata } from './registry.ts';

// Walks the grant registry: every grant it lists is in both metadata documents, is accepted by the
// token endpoint's validation (openapi.yaml's TokenRequest names it) and reaches the grant's own
// class, and is counted under its own metrics label.

const METRICS_TOKEN = 'metrics-token-for-grant-registry-0123';
const spec = parse(readFileSync(new URL('../../../openapi.yaml', import.meta.url), 'utf8')) as {
  components: { schemas: { TokenRequest: { properties: { grant_type: { enum: string[] } } } } };
};

describe('the grant registry', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { METRICS_TOKEN } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists each grant type once, each with its own class and metrics label', () => {
    expect(GRANTS.length).toBeGreaterThan(0);
    expect(new Set(GRANT_TYPES).size).toBe(GRANTS.length);
    expect(new Set(GRANTS.map((g) => g.handler)).size).toBe(GRANTS.length);
    for (const grant of GRANTS) {
      expect(grant.metricsLabel).toMatch(/^[a-z_]+$/);
      expect(grant.metricsLabel).not.toBe('other');
      expect(grantMetricsLabel(grant.type)).toBe(grant.metricsLabel);
    }
    expect(grantMetricsLabel('urn:example:not-a-grant')).toBe('other');
  });

  it('puts the endpoints a grant brings in the metadata, from the issuer', () => {
    const device = {
      ...GRANTS[0]!,
      metadata: (base: string) => ({ device_authorization_endpoint: `${base}/oauth/device` }),
    } as Grant;
    expect(grantsMetadata('https://as.example', [...GRANTS, device])).toEqual({
      device_authorization_endpoint: 'https://as.example/oauth/device',
    });
  });

  it("openapi.yaml's TokenRequest grant_type lists every registered grant, and nothing else", () => {
    expect([...spec.components.schemas.TokenRequest.properties.grant_type.enum].sort()).toEqual(
      [...GRANT_TYPES].sort(),
    );
  });

  it('both metadata documents announce every registered grant, with the endpoints it brings', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetch(`${server.baseUrl}${path}`)).json()) as Record<string, unknown>;
      expect(metadata.grant_types_supported).toEqual(GRANT_TYPES);
      for (const grant of GRANTS) expect(metadata).toMatchObject(grant.metadata?.(server.baseUrl) ?? {});
    }
  });

  it('the token endpoint takes every registered grant to its class, and counts it under its label', async () => {
    const f = await createFixture(server.ctx.db);
    for (const grant of GRANTS) {
      // Only grant_type and the client: the contract's validation passes, the grant's class refuses.
      const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: grant.type, client_id: f.clientId, client_secret: f.clientSecret }),
      });
      const body = (await res.json()) as { error: string };
      expect(res.status, grant.type).toBe(400);
      expect(body.error, grant.type).toBe('invalid_request');
    }
    const text = await (
      await fetch(`${server.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    for (const grant of GRANTS) {
      expect(text).toMatch(
        new RegExp(`oauth_token_grants_total\\{grant_type="${grant.metricsLabel}",outcome="invalid_request"\\} [1-9]`),
      );
    }
  });

  it('refuses a grant type the registry does not list', async () => {
    const f = await createFixture(server.ctx.db);
    const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        client_id: f.clientId,
        client_secret: f.clientSecret,
        username: 'u',
        password: 'p',
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).not.toBe('invalid_client');
  });
});
