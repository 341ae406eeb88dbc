import { describe, expect, it } from 'vitest';
import { tokenDetailTarget } from './tokenExchange.ts';

// A token exchange's `resource` names a namespace token by its detail URL, exactly as getAccessToken's
// path and parameters allow it; anything else names nothing (invalid_target).

const BASE = 'https://api.example.test';

describe('tokenDetailTarget', () => {
  it('reads the namespace and id of a token detail URL', () => {
    expect(tokenDetailTarget(BASE, `${BASE}/api/open/v1/demo/tokens/42`)).toEqual({ namespace: 'demo', id: 42 });
    expect(tokenDetailTarget(BASE, `${BASE}/api/open/v1/Demo-Org/tokens/2147483647`)).toEqual({
      namespace: 'Demo-Org',
      id: 2147483647,
    });
  });

  it('names nothing for any other value', () => {
    for (const resource of [
      `${BASE}/api/open/v1/demo/tokens/0`,
      `${BASE}/api/open/v1/demo/tokens/042`,
      `${BASE}/api/open/v1/demo/tokens/2147483648`,
      `${BASE}/api/open/v1/demo/tokens/99999999999`,
      `${BASE}/api/open/v1/demo/tokens/-1`,
      `${BASE}/api/open/v1/demo/tokens/4.2`,
      `${BASE}/api/open/v1/demo/tokens/42/`,
      `${BASE}/api/open/v1/demo/tokens/42?x=1`,
      `${BASE}/api/open/v1/demo/tokens/42#x`,
      `${BASE}/api/open/v1/demo/tokens`,
      `${BASE}/api/open/v1/-demo/tokens/42`,
      `${BASE}/api/open/v1/de%2Fmo/tokens/42`,
      `${BASE}/api/open/v1/${'a'.repeat(65)}/tokens/42`,
      `${BASE}/api/open/v1/../v1/demo/tokens/42`,
      `${BASE}.evil.example/api/open/v1/demo/tokens/42`,
      `${BASE}@evil.example/api/open/v1/demo/tokens/42`,
      `http://api.example.test/api/open/v1/demo/tokens/42`,
      `/api/open/v1/demo/tokens/42`,
      '',
    ]) {
      expect(tokenDetailTarget(BASE, resource), resource).toBeNull();
    }
  });
});
