import type { OAuthClient } from './clients.ts';

// Which redirect URIs a client may name at the authorization endpoint. An application registered
// in the console (or by the operator) has exactly one, compared as a string (RFC 9700 2.1). A
// client that registered itself may have several, each compared as a string too, except that for
// an http loopback URI the port is ignored (RFC 8252 7.3: a native app listens on whatever port the
// operating system gives it at the time of the request). `localhost` counts as loopback here
// because MCP clients (Claude Code among them) register http://localhost:PORT/callback.

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

function parse(uri: string): URL | null {
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

/** An http URI on a loopback host (127.0.0.1, [::1], localhost). */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** `uri` without its port, when it is an http loopback URI; null otherwise. */
function withoutLoopbackPort(uri: string): string | null {
  const url = parse(uri);
  if (!url || !isLoopbackHttp(url)) return null;
  url.port = '';
  return url.href;
}

/** Whether the client may be redirected to `uri` (RFC 6749 3.1.2.3, with RFC 8252 7.3 for self-registered clients). */
export function redirectUriAllowed(
  client: Pick<OAuthClient, 'redirectUris' | 'registrationKind'>,
  uri: string,
): boolean {
  if (client.redirectUris.includes(uri)) return true;
  if (client.registrationKind === 'console') return false;
  const portless = withoutLoopbackPort(uri);
  return portless !== null && client.redirectUris.some((registered) => withoutLoopbackPort(registered) === portless);
}
