import { describe, expect, it } from 'vitest';
import { AuthorizePageError, AuthorizeRedirectError } from '../shared/errors.ts';
import { checkAuthorizeParameters, redirectWith, type AuthorizeRequest } from './authorize.ts';
import type { OAuthClient } from './clients.ts';

const client: OAuthClient = {
  id: 7,
  clientId: 'app_client',
  name: 'App',
  description: '',
  homepage: 'https://app.example',
  redirectUri: 'https://app.example/callback?tenant=a',
  redirectUris: ['https://app.example/callback?tenant=a'],
  ownerUserId: 1,
  tokenEndpointAuthMethod: 'client_secret_basic',
  registrationKind: 'console',
  pkceRequired: true,
  requirePushedRequests: false,
};
// The shape of an S256 challenge: base64url of a SHA-256 digest, 43 characters.
const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

const valid = {
  client_id: client.clientId,
  redirect_uri: client.redirectUri,
  response_type: 'code',
  scope: 'api_key user_info',
  state: 'xyz',
  code_challenge: challenge,
  code_challenge_method: 'S256',
};

function check(params: Record<string, unknown>, forClient: OAuthClient = client) {
  const partial: Partial<AuthorizeRequest> = {};
  try {
    return { request: checkAuthorizeParameters(forClient, params, 'http://localhost:3000', partial), partial };
  } catch (error) {
    return { error, partial };
  }
}

function redirectError(params: Record<string, unknown>, forClient: OAuthClient = client) {
  const { error, partial } = check(params, forClient);
  expect(error).toBeInstanceOf(AuthorizeRedirectError);
  return { error: error as AuthorizeRedirectError, partial };
}

describe('authorization request parameters (RFC 6749 4.1.1, RFC 7636 4.3)', () => {
  it('accepts a complete request and stores the scope in canonical order', () => {
    const { request } = check(valid);
    expect(request).toMatchObject({
      client,
      redirectUri: client.redirectUri,
      scope: 'user_info api_key',
      state: 'xyz',
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
      nonce: undefined,
      maxAge: undefined,
    });
    expect([...request!.prompt]).toEqual([]);
  });

  describe('redirect_uri: a page, never a redirect, when it cannot be trusted', () => {
    it.each([
      ['missing', undefined],
      ['a prefix of the registered one', 'https://app.example/callback'],
      ['the registered one with another query', 'https://app.example/callback?tenant=b'],
      ['differently cased', 'https://APP.example/callback?tenant=a'],
      ['with a trailing slash', 'https://app.example/callback/?tenant=a'],
      ['with a fragment', `${client.redirectUri}#x`],
      ['sent twice', [client.redirectUri, client.redirectUri]],
    ])('refuses one %s (exact match, RFC 9700 2.1)', (_what, redirectUri) => {
      const { error, partial } = check({ ...valid, redirect_uri: redirectUri });
      expect(error).toBeInstanceOf(AuthorizePageError);
      expect(partial.redirectUri).toBeUndefined();
    });
  });

  it('keeps no state longer than 2000 code points, and sends the error without it', () => {
    const { partial, error } = redirectError({ ...valid, state: '\u{1F600}'.repeat(2001) });
    expect(error.error).toBe('invalid_request');
    expect(partial.state).toBeUndefined();
    expect(partial.redirectUri).toBe(client.redirectUri);
    // 2000 astral characters are 4000 UTF-16 units, and still allowed.
    expect(check({ ...valid, state: '\u{1F600}'.repeat(2000) }).request?.state).toHaveLength(4000);
  });

  it('treats an empty state as none', () => {
    expect(check({ ...valid, state: '' }).request?.state).toBeUndefined();
  });

  it.each(['response_type', 'scope', 'code_challenge', 'code_challenge_method', 'nonce', 'prompt', 'max_age', 'state'])(
    'refuses %s sent more than once with invalid_request',
    (name) => {
      const { error } = redirectError({ ...valid, [name]: ['a', 'b'] });
      expect(error.error).toBe('invalid_request');
      expect(error.message).toBe(`${name} was sent more than once.`);
    },
  );

  it('answers a missing response_type with invalid_request and another one with unsupported_response_type', () => {
    expect(redirectError({ ...valid, response_type: undefined }).error.error).toBe('invalid_request');
    expect(redirectError({ ...valid, response_type: 'token' }).error.error).toBe('unsupported_response_type');
    expect(redirectError({ ...valid, response_type: 'code id_token' }).error.error).toBe('unsupported_response_type');
  });

  it('requires a scope and names every unknown one', () => {
    expect(redirectError({ ...valid, scope: '  ' }).error.error).toBe('invalid_request');
    const { error } = redirectError({ ...valid, scope: 'user_info email profile' });
    expect(error.error).toBe('invalid_scope');
    expect(error.message).toBe('Unknown scope: email profile');
  });

  describe('PKCE', () => {
    it('requires a challenge of a client that must use PKCE', () => {
      const { error } = redirectError({ ...valid, code_challenge: undefined, code_challenge_method: undefined });
      expect(error.message).toMatch(/^PKCE is required/);
    });

    it('lets an exempted client leave PKCE out, but not send a method alone', () => {
      const exempt = { ...client, pkceRequired: false };
      const { request } = check({ ...valid, code_challenge: undefined, code_challenge_method: undefined }, exempt);
      expect(request?.codeChallenge).toBeUndefined();
      expect(request?.codeChallengeMethod).toBeUndefined();
      const { error } = redirectError({ ...valid, code_challenge: undefined }, exempt);
      expect(error.message).toBe('code_challenge_method was sent without code_challenge.');
    });

    it('accepts S256 only: an absent method means plain (RFC 7636 4.3), which is refused', () => {
      expect(redirectError({ ...valid, code_challenge_method: undefined }).error.message).toBe(
        'code_challenge_method must be S256.',
      );
      expect(redirectError({ ...valid, code_challenge_method: 'plain' }).error.error).toBe('invalid_request');
      expect(redirectError({ ...valid, code_challenge_method: 's256' }).error.error).toBe('invalid_request');
    });

    it.each([
      ['42 characters', challenge.slice(1)],
      ['44 characters', `${challenge}A`],
      ['base64 padding', `${challenge.slice(0, 42)}=`],
      ['a + of plain base64', `${challenge.slice(0, 42)}+`],
    ])('refuses a challenge of %s', (_what, value) => {
      expect(redirectError({ ...valid, code_challenge: value }).error.message).toMatch(/^code_challenge must be/);
    });
  });

  describe('OpenID Connect parameters (Core 3.1.2.1)', () => {
    it('reads nonce, prompt and max_age', () => {
      const { request } = check({ ...valid, nonce: 'n-0S6', prompt: 'login consent', max_age: '0' });
      expect(request?.nonce).toBe('n-0S6');
      expect([...request!.prompt].sort()).toEqual(['consent', 'login']);
      expect(request?.maxAge).toBe(0);
    });

    it('refuses prompt=none with another value, an unknown value, and select_account', () => {
      expect(redirectError({ ...valid, prompt: 'none login' }).error.message).toMatch(/prompt=none cannot/);
      expect(redirectError({ ...valid, prompt: 'select_account' }).error.message).toBe(
        'Unsupported prompt value: select_account',
      );
    });

    it.each(['-1', '1.5', '1e3', ' 1', '1234567890', ''])('refuses max_age %j', (maxAge) => {
      expect(redirectError({ ...valid, max_age: maxAge }).error.error).toBe('invalid_request');
    });

    it('bounds the nonce at 255 code points', () => {
      expect(check({ ...valid, nonce: 'n'.repeat(255) }).request?.nonce).toHaveLength(255);
      expect(redirectError({ ...valid, nonce: 'n'.repeat(256) }).error.error).toBe('invalid_request');
    });
  });
});

describe('the redirect to the client (4.1.2)', () => {
  it("appends the parameters to the redirect_uri's own query and leaves undefined ones out", () => {
    const url = new URL(redirectWith(client.redirectUri, { code: 'a b&c', state: undefined, iss: 'https://as' }));
    expect(url.origin + url.pathname).toBe('https://app.example/callback');
    expect([...url.searchParams]).toEqual([
      ['tenant', 'a'],
      ['code', 'a b&c'],
      ['iss', 'https://as'],
    ]);
  });
});
