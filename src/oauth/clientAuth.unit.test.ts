import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../shared/errors.ts';
import { basicCredentials, clientCredentials } from './clientAuth.ts';

// Only the headers and the parsed form body are read: a plain object stands in for the request.
const request = (authorization?: string, body?: Record<string, unknown>) =>
  ({ headers: authorization === undefined ? {} : { authorization }, body }) as unknown as Request;
const basic = (userPass: string) => `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;

function oauthErrorOf(fn: () => unknown): OAuthError {
  try {
    fn();
  } catch (err) {
    if (err instanceof OAuthError) return err;
    throw err;
  }
  throw new Error('expected an OAuthError');
}

describe('HTTP Basic client credentials (RFC 6749 2.3.1)', () => {
  it('form-decodes client_id and client_secret after base64 (+ is a space, %XX an octet)', () => {
    expect(basicCredentials(request(basic('my%2Dapp:s%3Acret+with%20spaces%25')))).toEqual({
      clientId: 'my-app',
      clientSecret: 's:cret with spaces%',
    });
  });

  it('splits at the first colon: a secret may hold colons unencoded', () => {
    expect(basicCredentials(request(basic('app:a:b:c')))).toEqual({ clientId: 'app', clientSecret: 'a:b:c' });
  });

  it('takes the scheme name in any case and ignores surrounding spaces of the credentials', () => {
    expect(basicCredentials(request(`bAsIc   ${Buffer.from('app:secret').toString('base64')}  `))).toEqual({
      clientId: 'app',
      clientSecret: 'secret',
    });
  });

  it('is undefined without Basic (no header, or another scheme)', () => {
    expect(basicCredentials(request())).toBeUndefined();
    expect(basicCredentials(request('Bearer abc'))).toBeUndefined();
    expect(basicCredentials(request('Basicabc'))).toBeUndefined();
  });

  it('is null when malformed: no colon, or a broken percent-escape on either side', () => {
    expect(basicCredentials(request(basic('no-colon-here')))).toBeNull();
    expect(basicCredentials(request(basic('app%ZZ:secret')))).toBeNull();
    expect(basicCredentials(request(basic('app:secret%')))).toBeNull();
  });
});

describe('the request client credentials', () => {
  it('answers a malformed Basic header with invalid_request (400), not invalid_client (5.2)', () => {
    const err = oauthErrorOf(() => clientCredentials(request(basic('nocolon'), { client_id: 'app' })));
    expect(err.error).toBe('invalid_request');
    expect(err.status).toBe(400);
  });

  it('answers no credentials at all with invalid_client, 401 and a Basic challenge', () => {
    for (const body of [undefined, {}, { client_id: '' }, { client_id: 'app', client_secret: '' }]) {
      const err = oauthErrorOf(() => clientCredentials(request(undefined, body)));
      expect(err.error).toBe('invalid_client');
      expect(err.status).toBe(401);
      expect(err.headers['WWW-Authenticate']).toMatch(/^Basic /);
    }
  });

  it("answers a client_id alone as a public client's credentials: no secret ('')", () => {
    expect(clientCredentials(request(undefined, { client_id: 'app' }))).toEqual({
      clientId: 'app',
      clientSecret: '',
      secondMethod: false,
    });
  });

  it('refuses form credentials that are not strings (a repeated parameter parses to an array)', () => {
    const err = oauthErrorOf(() =>
      clientCredentials(request(undefined, { client_id: ['a', 'b'], client_secret: 's' })),
    );
    expect(err.error).toBe('invalid_client');
  });

  it('takes client_secret_post credentials from the body', () => {
    expect(clientCredentials(request(undefined, { client_id: 'app', client_secret: 's3' }))).toEqual({
      clientId: 'app',
      clientSecret: 's3',
      secondMethod: false,
    });
  });

  it('prefers Basic and marks a second method: a body secret, or a body client_id naming another client', () => {
    const header = basic('app:secret');
    expect(clientCredentials(request(header, {})).secondMethod).toBe(false);
    expect(clientCredentials(request(header, { client_id: 'app' })).secondMethod).toBe(false);
    expect(clientCredentials(request(header, { client_id: 'other' })).secondMethod).toBe(true);
    expect(clientCredentials(request(header, { client_secret: 'secret' })).secondMethod).toBe(true);
    expect(clientCredentials(request(header, { client_id: 'other', client_secret: 'x' }))).toMatchObject({
      clientId: 'app',
      clientSecret: 'secret',
    });
  });
});
