import { describe, expect, it } from 'vitest';
import { isScope, joinScopes, splitScope, SUPPORTED_SCOPES } from './scopes.ts';

describe('scope parameter (RFC 6749 3.3)', () => {
  it('splits on single spaces, drops empty parts and collapses duplicates in first-seen order', () => {
    expect(splitScope('user_info  api_key user_info')).toEqual(['user_info', 'api_key']);
    expect(splitScope(' openid ')).toEqual(['openid']);
  });

  it('reads an absent or empty parameter as no scope', () => {
    expect(splitScope(undefined)).toEqual([]);
    expect(splitScope(null)).toEqual([]);
    expect(splitScope('')).toEqual([]);
    expect(splitScope('   ')).toEqual([]);
  });

  it('keeps a tab or comma inside one token: only the space delimits (3.3)', () => {
    expect(splitScope('user_info,api_key')).toEqual(['user_info,api_key']);
    expect(splitScope('user_info\tapi_key')).toEqual(['user_info\tapi_key']);
  });

  it('knows the catalogue scopes only, case-sensitively, and no inherited property name', () => {
    expect(SUPPORTED_SCOPES).toEqual(['openid', 'user_info', 'api_key', 'workflows:run', 'workflows:read']);
    for (const scope of SUPPORTED_SCOPES) expect(isScope(scope)).toBe(true);
    for (const other of ['USER_INFO', 'profile', 'toString', 'constructor', '__proto__', 'hasOwnProperty', ''])
      expect(isScope(other)).toBe(false);
  });

  it('joins to the canonical form: catalogue order, unknown scopes left out', () => {
    expect(joinScopes(['api_key', 'openid', 'user_info'])).toBe('openid user_info api_key');
    expect(joinScopes(['api_key', 'email', 'api_key'])).toBe('api_key');
    expect(joinScopes([])).toBe('');
  });

  it('gives one stored form for every order the client sends', () => {
    const forms = new Set(
      ['user_info api_key', 'api_key user_info', 'api_key api_key user_info'].map((s) => joinScopes(splitScope(s))),
    );
    expect([...forms]).toEqual(['user_info api_key']);
  });
});
