import { describe, expect, it } from 'vitest';
import { lookupOrder } from './revocationHint.ts';

describe('token_type_hint at the revocation endpoint (RFC 7009 2.1)', () => {
  it('looks a refresh token up as one first, then as an access token', () => {
    expect(lookupOrder('refresh_token')).toEqual(['refresh_token', 'access_token']);
  });

  it('looks up as an access token first when so hinted, without a hint, or with a hint it does not know', () => {
    for (const hint of ['access_token', undefined, '', 'id_token', 'REFRESH_TOKEN', ['refresh_token']])
      expect(lookupOrder(hint)).toEqual(['access_token', 'refresh_token']);
  });

  it('always tries both types: a wrong hint never hides a token', () => {
    for (const hint of ['access_token', 'refresh_token', 'bogus'])
      expect([...lookupOrder(hint)].sort()).toEqual(['access_token', 'refresh_token']);
  });
});
