import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../context.ts';
import { isLowSSignature } from './lowS.ts';
import { looksLikeJwt } from './proxyTokenAuth.ts';
import { claimsOf, type ProxyTokenSubject } from './proxyTokenClaims.ts';
import { proxyTokenAudience, signProxyToken } from './proxyTokens.ts';

const BASE_URL = 'https://auth.example';
// Signing reads only the issuer and the lifetime from the context.
const ctx = { config: { BASE_URL, PROXY_TOKEN_TTL_SECONDS: 1800 } } as unknown as AppContext;
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const subject: ProxyTokenSubject = {
  userId: 42,
  clientId: 'app_1',
  authorizationId: 9,
  chainId: 3,
  accessTokenId: 77,
  namespace: 'acme',
  usageScenario: 'trial',
};
const payload = {
  sub: '42',
  jti: 'b9f3',
  exp: 2_000_000_000,
  client_id: 'app_1',
  token_id: 77,
  namespace: 'acme',
  usage_scenario: 'paid',
  aid: 9,
};

describe('proxy token signing (DESIGN.md "Proxy token")', () => {
  it('signs an at+jwt for the gateway, with its kid, valid PROXY_TOKEN_TTL_SECONDS, in low-S form', async () => {
    const now = Date.UTC(2026, 10, 1, 12, 0, 0, 999);
    const { token, expiresIn, claims } = await signProxyToken(ctx, { kid: 'k1', key: privateKey }, subject, now);
    expect(expiresIn).toBe(1800);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' });
    expect(isLowSSignature(token.split('.')[2]!)).toBe(true);
    const { payload: signed } = await jwtVerify(token, publicKey, {
      issuer: BASE_URL,
      audience: `${BASE_URL}/serverless`,
      typ: 'at+jwt',
      currentDate: new Date(now),
    });
    expect(signed).toMatchObject({
      sub: '42',
      iat: Math.floor(now / 1000),
      exp: Math.floor(now / 1000) + 1800,
      client_id: 'app_1',
      token_id: 77,
      namespace: 'acme',
      usage_scenario: 'trial',
      aid: 9,
      cid: 3,
    });
    expect(claimsOf(signed)).toEqual(claims);
    expect(claims).toEqual({ ...subject, jti: signed.jti, exp: Math.floor(now / 1000) + 1800 });
  });

  it('gives every token its own jti and leaves cid out for a token of no chain', async () => {
    const { chainId: _none, ...unchained } = subject;
    const a = await signProxyToken(ctx, { kid: 'k1', key: privateKey }, unchained);
    const b = await signProxyToken(ctx, { kid: 'k1', key: privateKey }, unchained);
    expect(a.claims.jti).not.toBe(b.claims.jti);
    const { payload: signed } = await jwtVerify(a.token, publicKey);
    expect(signed).not.toHaveProperty('cid');
    expect(claimsOf(signed)?.chainId).toBeUndefined();
  });

  it('carries cnf.jkt for a subject bound to a DPoP key (RFC 9449 6.1), and no cnf otherwise', async () => {
    const bound = await signProxyToken(ctx, { kid: 'k1', key: privateKey }, { ...subject, jkt: 'thumbprint' });
    const { payload: signed } = await jwtVerify(bound.token, publicKey);
    expect(signed.cnf).toEqual({ jkt: 'thumbprint' });
    expect(claimsOf(signed)?.jkt).toBe('thumbprint');
    const { payload: plain } = await jwtVerify(
      (await signProxyToken(ctx, { kid: 'k1', key: privateKey }, subject)).token,
      publicKey,
    );
    expect(plain).not.toHaveProperty('cnf');
    expect(claimsOf(plain)).not.toHaveProperty('jkt');
  });

  it('is not accepted by an OAuth or workflow API audience', async () => {
    expect(proxyTokenAudience(ctx)).toBe('https://auth.example/serverless');
    const { token } = await signProxyToken(ctx, { kid: 'k1', key: privateKey }, subject);
    await expect(jwtVerify(token, publicKey, { audience: BASE_URL })).rejects.toThrow();
  });
});

describe('reading a verified payload back into claims', () => {
  it('reads a complete payload', () => {
    expect(claimsOf(payload)).toEqual({
      userId: 42,
      clientId: 'app_1',
      authorizationId: 9,
      chainId: undefined,
      accessTokenId: 77,
      namespace: 'acme',
      usageScenario: 'paid',
      jti: 'b9f3',
      exp: 2_000_000_000,
    });
  });

  it.each([
    ['sub with a leading zero', { sub: '042' }],
    ['sub zero', { sub: '0' }],
    ['sub negative', { sub: '-42' }],
    ['sub a number, not a string', { sub: 42 }],
    ['sub with a fraction', { sub: '42.0' }],
    ['sub beyond safe integers', { sub: '9007199254740993' }],
    ['no jti', { jti: undefined }],
    ['exp a string', { exp: '2000000000' }],
    ['exp with a fraction', { exp: 2_000_000_000.5 }],
    ['no client_id', { client_id: undefined }],
    ['namespace a number', { namespace: 7 }],
    ['token_id a string', { token_id: '77' }],
    ['token_id zero', { token_id: 0 }],
    ['no aid', { aid: undefined }],
    ['cid zero', { cid: 0 }],
    ['cid a string', { cid: '3' }],
    ['another usage_scenario', { usage_scenario: 'free' }],
    ['cnf without jkt', { cnf: {} }],
    ['cnf null', { cnf: null }],
    ['cnf.jkt empty', { cnf: { jkt: '' } }],
    ['cnf.jkt a number', { cnf: { jkt: 7 } }],
  ])('refuses %s', (_what, change) => {
    expect(claimsOf({ ...payload, ...change } as JWTPayload)).toBeNull();
  });
});

describe('telling a proxy token from an opaque one', () => {
  it('takes three base64url parts as a JWT, and nothing else', () => {
    expect(looksLikeJwt('eyJh.eyJz.c2ln')).toBe(true);
    expect(looksLikeJwt('oat_abcdef')).toBe(false);
    expect(looksLikeJwt('a.b')).toBe(false);
    expect(looksLikeJwt('a.b.c.d')).toBe(false);
    expect(looksLikeJwt('a..c')).toBe(false);
    expect(looksLikeJwt('a.b.c=')).toBe(false);
    expect(looksLikeJwt('a.b+.c')).toBe(false);
    expect(looksLikeJwt('a.b.c\n')).toBe(false);
  });
});
