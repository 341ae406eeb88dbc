import { describe, expect, it } from 'vitest';
import { fromLocation, hydraDsn, hydraEnv, shortReason } from './config.ts';

describe('the Hydra peer configuration', () => {
  it('points the DSN at its own database with a pool of open and idle connections alike, keeping the credentials', () => {
    const dsn = new URL(hydraDsn('postgres://postgres:p%40ss@127.0.0.1:5433/postgres', 'hydra_bench', 10));
    expect(dsn.pathname).toBe('/hydra_bench');
    expect(dsn.password).toBe('p%40ss');
    expect(Object.fromEntries(dsn.searchParams)).toEqual({ sslmode: 'disable', max_conns: '10', max_idle_conns: '10' });
  });

  it('serves opaque access tokens for 2 h and refresh tokens for 30 days, its issuer on the public port', () => {
    const env = hydraEnv({ dsn: 'postgres://x/y', publicPort: 4444, adminPort: 4445, secret: 's'.repeat(32) });
    expect(env).toMatchObject({
      URLS_SELF_ISSUER: 'http://127.0.0.1:4444',
      SERVE_PUBLIC_PORT: '4444',
      SERVE_ADMIN_PORT: '4445',
      STRATEGIES_ACCESS_TOKEN: 'opaque',
      TTL_ACCESS_TOKEN: '2h',
      TTL_REFRESH_TOKEN: '720h',
      SECRETS_SYSTEM: 's'.repeat(32),
    });
  });
});

describe('fromLocation', () => {
  it('reads a challenge or a code off a redirect', () => {
    expect(fromLocation('http://127.0.0.1:9/login?login_challenge=abc', 'login_challenge')).toBe('abc');
  });

  it('says what Hydra answered instead when the parameter is missing', () => {
    expect(() =>
      fromLocation('http://127.0.0.1:9/callback?error=invalid_scope&error_description=nope', 'code'),
    ).toThrow('Hydra did not redirect with code: nope');
    expect(() => fromLocation(null, 'code')).toThrow('no Location');
  });
});

describe('shortReason', () => {
  it('keeps a skipped row to one short line: the first line, cut at the limit', () => {
    expect(shortReason('go: module lookup disabled\nmore detail')).toBe('go: module lookup disabled');
    expect(shortReason('x'.repeat(120), 100)).toBe(`${'x'.repeat(100)}…`);
  });
});
