// The pure parts of the Hydra peer (bench/hydra/peer.ts): its configuration, as environment
// variables of `hydra serve all`, and what the bench reads off its redirects.

/** The version the bench builds (bench/hydra/build.sh) and names in the table. */
export const HYDRA_VERSION = 'v2.3.0';

/**
 * Hydra's DSN for `database` on the PostgreSQL cluster whose maintenance URL is `adminUrl`. The pool
 * holds `pool` connections, open and idle alike, as our service's pool (10): Hydra's own defaults
 * (open: 2 per CPU, idle: 1 per CPU) would close and reopen connections under a 32-client load.
 */
export function hydraDsn(adminUrl: string, database: string, pool: number): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  url.search = new URLSearchParams({
    sslmode: 'disable',
    max_conns: String(pool),
    max_idle_conns: String(pool),
  }).toString();
  return url.toString();
}

export interface HydraSettings {
  dsn: string;
  publicPort: number;
  adminPort: number;
  /** Hydra's system secret (at least 16 characters): it encrypts what Hydra stores. */
  secret: string;
}

/** Where Hydra sends the browser to log in and to consent: never visited, the bench reads the challenge off the redirect. */
export const LOGIN_URL = 'http://127.0.0.1:9/login';
export const CONSENT_URL = 'http://127.0.0.1:9/consent';

/**
 * `hydra serve all`'s configuration as Hydra reads it from the environment. As ours and the
 * oidc-provider peer: opaque access tokens for two hours, refresh tokens for thirty days, rotated
 * on every use (Hydra's default, no grace period), logs at warn as our service's LOG_LEVEL.
 */
export function hydraEnv(s: HydraSettings): Record<string, string> {
  const issuer = `http://127.0.0.1:${s.publicPort}`;
  return {
    DSN: s.dsn,
    SECRETS_SYSTEM: s.secret,
    URLS_SELF_ISSUER: issuer,
    URLS_SELF_PUBLIC: issuer,
    URLS_LOGIN: LOGIN_URL,
    URLS_CONSENT: CONSENT_URL,
    SERVE_PUBLIC_HOST: '127.0.0.1',
    SERVE_PUBLIC_PORT: String(s.publicPort),
    SERVE_ADMIN_HOST: '127.0.0.1',
    SERVE_ADMIN_PORT: String(s.adminPort),
    STRATEGIES_ACCESS_TOKEN: 'opaque',
    TTL_ACCESS_TOKEN: '2h',
    TTL_REFRESH_TOKEN: '720h',
    LOG_LEVEL: 'warn',
    // No usage reports (the machine does not reach Ory's servers anyway).
    SQA_OPT_OUT: 'true',
  };
}

/** The `name` query parameter of a redirect's Location (a login or consent challenge, a code). */
export function fromLocation(location: string | null, name: string): string {
  const value = location ? new URL(location).searchParams.get(name) : null;
  if (!value) {
    const error = location
      ? (new URL(location).searchParams.get('error_description') ?? new URL(location).searchParams.get('error'))
      : null;
    throw new Error(`Hydra did not redirect with ${name}: ${error ?? location ?? 'no Location'}`);
  }
  return value;
}

/** A reason short enough for a table cell: its first line, cut at `max` characters. */
export function shortReason(text: string, max = 100): string {
  const first = text.trim().split('\n')[0] ?? '';
  return first.length > max ? `${first.slice(0, max)}…` : first;
}
