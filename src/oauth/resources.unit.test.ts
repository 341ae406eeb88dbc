import { describe, expect, it } from 'vitest';
import { OAuthError } from '../shared/errors.ts';
import { joinResources, requestedResources, resourceRefusal, splitResources, tokenAudience } from './resources.ts';

const BASE = 'https://workflows.example.com';
const MCP = `${BASE}/mcp`;
const OPEN = `${BASE}/api/open`;

describe('resource indicators (RFC 8707 2)', () => {
  it('takes exactly the three resource identifiers, compared as strings', () => {
    for (const r of [OPEN, `${BASE}/api/workflows`, MCP]) expect(resourceRefusal(BASE, r)).toBeNull();
    const refused = [
      '/mcp', // not absolute
      `${MCP}#x`, // a fragment
      `${MCP}#`, // an empty fragment is a fragment too
      `${MCP}/`, // not the identifier (no normalisation)
      `${BASE}/serverless`, // ours, but no OAuth resource
      'https://elsewhere.example/mcp',
      '',
      'not a uri',
    ];
    for (const r of refused) expect(resourceRefusal(BASE, r), r).not.toBeNull();
    expect(resourceRefusal(BASE, ['array'])).not.toBeNull();
  });

  it("reads an authorization request's resource parameters: one or several, each checked", () => {
    const fail = (d: string) => new Error(d);
    expect(requestedResources(BASE, undefined, fail)).toBeNull();
    expect(requestedResources(BASE, MCP, fail)).toBe(MCP);
    expect(requestedResources(BASE, [OPEN, MCP, OPEN], fail)).toBe(`${OPEN} ${MCP}`);
    expect(() => requestedResources(BASE, [OPEN, 'https://elsewhere.example/'], fail)).toThrow(
      /not a protected resource/,
    );
  });

  it("sets a token's audience: the one asked for among the grant's, or the grant's all", () => {
    expect(tokenAudience(BASE, null, undefined)).toBeNull();
    expect(tokenAudience(BASE, null, MCP)).toBe(MCP);
    expect(tokenAudience(BASE, `${OPEN} ${MCP}`, undefined)).toBe(`${OPEN} ${MCP}`);
    expect(tokenAudience(BASE, `${OPEN} ${MCP}`, MCP)).toBe(MCP);
    for (const requested of [`${BASE}/api/workflows`, 'https://elsewhere.example/']) {
      let error: unknown;
      try {
        tokenAudience(BASE, `${OPEN} ${MCP}`, requested);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(OAuthError);
      expect((error as OAuthError).error).toBe('invalid_target');
    }
  });

  it('stores a set as one space-separated string, null when empty', () => {
    expect(joinResources([])).toBeNull();
    expect(splitResources(joinResources([OPEN, MCP]))).toEqual([OPEN, MCP]);
    expect(splitResources(null)).toEqual([]);
  });
});
