import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../context.ts';
import type { Grant } from './grants/grant.ts';
import { GRANT_TYPES, grantMetricsLabel, grantsMetadata } from './grants/registry.ts';
import { atHash } from './idToken.ts';
import { getAuthorizationServerMetadata, getOpenIdConfiguration } from './metadata.ts';

const BASE_URL = 'https://auth.example';
// The documents are built from the issuer and whether metadata-document client ids are allowed.
const ctx = { config: { BASE_URL, CLIENT_ID_METADATA_DOCUMENT_HOSTS: [] } } as unknown as AppContext;

/** Runs a handler that answers with headers and JSON, and returns both. */
function answer(handler: ReturnType<typeof getOpenIdConfiguration>) {
  const headers: Record<string, string> = {};
  let body: Record<string, unknown> | undefined;
  const res = {
    set(name: string, value: string) {
      headers[name] = value;
      return res;
    },
    json(value: Record<string, unknown>) {
      body = value;
      return res;
    },
  };
  void handler({} as Request, res as unknown as Response, () => {});
  return { headers, body: body! };
}

describe('authorization server metadata (RFC 8414 2) and OpenID configuration (Discovery 1.0, 3)', () => {
  const oauth = answer(getAuthorizationServerMetadata(ctx));
  const openid = answer(getOpenIdConfiguration(ctx));

  it('names the issuer and every endpoint under it', () => {
    expect(oauth.body).toMatchObject({
      issuer: BASE_URL,
      authorization_endpoint: `${BASE_URL}/oauth/authorize`,
      token_endpoint: `${BASE_URL}/api/open/oauth/token`,
      revocation_endpoint: `${BASE_URL}/api/open/oauth/revoke`,
      jwks_uri: `${BASE_URL}/.well-known/jwks.json`,
      userinfo_endpoint: `${BASE_URL}/api/open/v1/userinfo`,
    });
  });

  it('offers the code flow with S256 PKCE, the iss response parameter and both client_secret methods', () => {
    expect(oauth.body).toMatchObject({
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      scopes_supported: ['openid', 'user_info', 'api_key', 'workflows:run', 'workflows:read'],
    });
  });

  it('lists exactly the registered grant types', () => {
    expect(oauth.body.grant_types_supported).toEqual(GRANT_TYPES);
    expect(GRANT_TYPES).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
  });

  it('says in the OpenID document everything RFC 8414 says, and the same', () => {
    expect(openid.body).toMatchObject(oauth.body);
  });

  it('offers RS256 first for ID tokens (Discovery 1.0, 3 requires it), and says what it does not do', () => {
    expect(openid.body.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256']);
    expect(openid.body).toMatchObject({
      subject_types_supported: ['public'],
      response_modes_supported: ['query'],
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      prompt_values_supported: ['none', 'login', 'consent'],
    });
    expect(openid.body.claims_supported).toEqual(expect.arrayContaining(['sub', 'nonce', 'at_hash', 'auth_time']));
  });

  it('lets caches keep both documents for five minutes', () => {
    expect(oauth.headers['Cache-Control']).toBe('public, max-age=300');
    expect(openid.headers['Cache-Control']).toBe('public, max-age=300');
  });
});

describe('what grants add to the metadata', () => {
  const grant = (type: string, metadata?: (base: string) => Record<string, string>) =>
    ({ type, handler: class {}, metricsLabel: type, metadata }) as unknown as Grant;

  it('merges the endpoints each grant brings, from the issuer, and nothing for a grant that brings none', () => {
    const device = grant('urn:ietf:params:oauth:grant-type:device_code', (base) => ({
      device_authorization_endpoint: `${base}/device`,
    }));
    expect(grantsMetadata(BASE_URL, [grant('authorization_code'), device])).toEqual({
      device_authorization_endpoint: `${BASE_URL}/device`,
    });
    expect(grantsMetadata(BASE_URL, [])).toEqual({});
  });

  it('counts an unregistered or missing grant_type under one label, other', () => {
    expect(grantMetricsLabel('password')).toBe('other');
    expect(grantMetricsLabel(undefined)).toBe('other');
    expect(grantMetricsLabel(['authorization_code'])).toBe('other');
  });
});

describe('ID token at_hash (OpenID Connect Core 3.1.3.6)', () => {
  it("matches the specification's example", () => {
    expect(atHash('jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y')).toBe('77QmUPtjPfzWtF2AnpK9RQ');
  });

  it('is the base64url of 16 bytes: the left half of a SHA-256', () => {
    expect(Buffer.from(atHash('any token'), 'base64url')).toHaveLength(16);
    expect(atHash('token a')).not.toBe(atHash('token b'));
  });
});

describe('client_id_metadata_document_supported (draft-ietf-oauth-client-id-metadata-document)', () => {
  it('is absent when no host is allowed, and true in both documents when some are', () => {
    expect(answer(getAuthorizationServerMetadata(ctx)).body).not.toHaveProperty(
      'client_id_metadata_document_supported',
    );
    expect(answer(getOpenIdConfiguration(ctx)).body).not.toHaveProperty('client_id_metadata_document_supported');
    const on = {
      config: { BASE_URL, CLIENT_ID_METADATA_DOCUMENT_HOSTS: ['app.example.com'] },
    } as unknown as AppContext;
    expect(answer(getAuthorizationServerMetadata(on)).body.client_id_metadata_document_supported).toBe(true);
    expect(answer(getOpenIdConfiguration(on)).body.client_id_metadata_document_supported).toBe(true);
  });
});
