import { resourceOfIdentifier } from '../http/protectedResources.ts';
import { invalidTarget } from '../shared/errors.ts';

// Resource indicators (RFC 8707): a client names the protected resources (src/http/protectedResources.ts)
// it wants a token for with `resource` (an absolute URI without a fragment, 2; repeatable). At the
// authorization and device authorization endpoints they become the grant's set; at the token endpoint
// a client narrows the access token's audience to one of them (2.2). A grant for which no resource
// was named is not limited: its tokens have no audience unless the token request names one of ours,
// which keeps every client that never sends `resource` working as before.
// Stored space separated (an absolute URI has no space); null when none was named.

export const splitResources = (value: string | null | undefined): string[] => [
  ...new Set((value ?? '').split(' ').filter(Boolean)),
];

export const joinResources = (resources: readonly string[]): string | null =>
  resources.length === 0 ? null : [...new Set(resources)].join(' ');

/**
 * Why `value` is not a resource this server issues tokens for, or null: RFC 8707 2 asks for an
 * absolute URI without a fragment, and this authorization server knows only its own resources.
 */
export function resourceRefusal(baseUrl: string, value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return 'resource must be an absolute URI.';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'resource must be an absolute URI.';
  }
  if (url.hash !== '' || value.includes('#')) return 'resource must not contain a fragment.';
  if (!resourceOfIdentifier(baseUrl, value))
    return `resource ${JSON.stringify(value.slice(0, 200))} is not a protected resource of this server.`;
  return null;
}

/**
 * The `resource` parameters of an authorization or device authorization request (one string or
 * several), checked: their set, space separated, or null when none was sent. `fail` builds the
 * endpoint's invalid_target error from a description.
 */
export function requestedResources(
  baseUrl: string,
  value: unknown,
  fail: (description: string) => Error,
): string | null {
  if (value === undefined) return null;
  const values = Array.isArray(value) ? (value as unknown[]) : [value];
  for (const v of values) {
    const refusal = resourceRefusal(baseUrl, v);
    if (refusal) throw fail(refusal);
  }
  return joinResources(values as string[]);
}

/**
 * The audience of an access token issued under a grant authorized for `granted` (null: not
 * limited), the token request naming `requested` (2.2): that one, when it is one of the grant's
 * (invalid_target otherwise); none named, every resource of the grant.
 */
export function tokenAudience(baseUrl: string, granted: string | null, requested: string | undefined): string | null {
  if (requested === undefined) return granted;
  const refusal = resourceRefusal(baseUrl, requested);
  if (refusal) throw invalidTarget(refusal);
  if (granted !== null && !splitResources(granted).includes(requested))
    throw invalidTarget('resource was not among the resources this grant was authorized for.');
  return requested;
}
