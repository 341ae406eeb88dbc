import { describe, expect, it } from 'vitest';
import { maxAgeOf, metadataDocumentUrl, parseMetadataDocument, redirectUriProblem } from './metadataDocument.ts';

const URL_ID = 'https://app.example.com/oauth/client.json';
const doc = (fields: Record<string, unknown>) =>
  Buffer.from(JSON.stringify({ client_id: URL_ID, redirect_uris: ['https://app.example.com/cb'], ...fields }));

describe('metadata-document client ids (draft-ietf-oauth-client-id-metadata-document 3)', () => {
  const hosts = ['app.example.com'];

  it('takes a canonical https URL with a path on an allowed host', () => {
    expect(metadataDocumentUrl(URL_ID, hosts).href).toBe(URL_ID);
    expect(metadataDocumentUrl('https://app.example.com:8443/c?v=1', hosts).port).toBe('8443');
  });

  it.each([
    ['http://app.example.com/c.json', /must use https/],
    ['https://user:pw@app.example.com/c.json', /user name or password/],
    ['https://app.example.com/c.json#x', /fragment/],
    ['https://app.example.com/a/../c.json', /\. or \.\. path segments/],
    ['https://app.example.com/./c.json', /\. or \.\. path segments/],
    ['https://app.example.com/', /must have a path/],
    ['https://app.example.com', /not in its canonical form|must have a path/],
    ['https://APP.example.com/c.json', /canonical form/],
    ['https://other.example.com/c.json', /other.example.com is not a host/],
    ['https://app.example.com.evil.test/c.json', /is not a host/],
  ])('refuses %s', (id, why) => {
    expect(() => metadataDocumentUrl(id, hosts)).toThrow(why);
  });
});

describe('metadata documents', () => {
  it('keeps the name, redirect URIs and links of a valid document', () => {
    expect(
      parseMetadataDocument(
        URL_ID,
        doc({
          client_name: 'Example',
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          client_uri: 'https://app.example.com/',
          logo_uri: 'https://app.example.com/logo.png',
        }),
      ),
    ).toEqual({
      clientId: URL_ID,
      clientName: 'Example',
      redirectUris: ['https://app.example.com/cb'],
      clientUri: 'https://app.example.com/',
      logoUri: 'https://app.example.com/logo.png',
    });
  });

  it.each([
    ['not JSON', Buffer.from('<html>'), /not JSON/],
    ['an array', Buffer.from('[]'), /not a JSON object/],
    ['another client_id', doc({ client_id: 'https://app.example.com/other.json' }), /client_id is not the URL/],
    ['a secret method', doc({ token_endpoint_auth_method: 'client_secret_basic' }), /must be none/],
    ['private_key_jwt', doc({ token_endpoint_auth_method: 'private_key_jwt' }), /must be none/],
    ['a client_secret', doc({ client_secret: 's' }), /client_secret is not allowed/],
    ['no redirect URI', doc({ redirect_uris: [] }), /redirect_uris must be/],
    ['an http redirect URI', doc({ redirect_uris: ['http://app.example.com/cb'] }), /non-loopback/],
    ['a javascript: redirect URI', doc({ redirect_uris: ['javascript:alert(1)'] }), /scheme javascript/],
    ['an implicit grant', doc({ grant_types: ['implicit'] }), /grant_types may list only/],
    ['a token response type', doc({ response_types: ['token'] }), /response_types may list only code/],
    ['an http logo', doc({ logo_uri: 'http://app.example.com/l.png' }), /logo_uri must be an https URL/],
  ])('refuses %s', (_name, body, why) => {
    expect(() => parseMetadataDocument(URL_ID, body)).toThrow(why);
  });

  it('takes loopback http (RFC 8252 7.3) and reverse-domain private-use schemes (7.1)', () => {
    expect(redirectUriProblem('http://127.0.0.1:33418/callback')).toBeNull();
    expect(redirectUriProblem('http://localhost/callback')).toBeNull();
    expect(redirectUriProblem('http://[::1]:9/cb')).toBeNull();
    expect(redirectUriProblem('com.example.app:/oauth')).toBeNull();
    expect(redirectUriProblem('myapp:/oauth')).toMatch(/scheme myapp/);
  });

  it('bounds Cache-Control max-age to [5 minutes, 24 hours], an hour without one', () => {
    expect(maxAgeOf(undefined)).toBe(3600);
    expect(maxAgeOf('public, max-age=600')).toBe(600);
    expect(maxAgeOf('max-age=10')).toBe(300);
    expect(maxAgeOf('max-age=9999999')).toBe(86_400);
    expect(maxAgeOf('no-cache')).toBe(3600);
  });
});
