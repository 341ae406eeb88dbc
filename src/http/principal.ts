import type { Request } from 'express';

/** The caller of an API request, as established by a security handler (security.ts). */
export type Principal =
  | {
      kind: 'oauth';
      userId: number;
      applicationId: number;
      clientId: string;
      /** Null for a token of a grant that does not descend from a code (src/oauth/grants/registry.ts). */
      authorizationId: number | null;
      /** The chain the token belongs to (the code it descends from), when known. */
      chainId?: number;
      scopes: string[];
      /** The user's public profile, read with the token (absent when a principal is built by hand). */
      user?: { id: number; login: string; name: string; avatar_url: string };
      /** The DPoP key the token is bound to (RFC 9449 6.1 `cnf.jkt`); absent for a bearer token. */
      dpopJkt?: string;
      /** The resource identifiers the token was issued for (RFC 8707); absent when none was named. */
      audience?: string[];
    }
  | {
      kind: 'apiKey';
      userId: number;
      accessTokenId: number;
      namespace: string;
      usageScenario: 'paid' | 'trial';
      permissions: string[];
    }
  | {
      kind: 'proxy';
      userId: number;
      accessTokenId: number;
      authorizationId: number;
      clientId: string;
      namespace: string;
      usageScenario: 'paid' | 'trial';
      jti: string;
      /** The DPoP key the proxy token is bound to (its `cnf.jkt`); absent for a bearer one. */
      dpopJkt?: string;
    };

export type PrincipalOf<K extends Principal['kind']> = Extract<Principal, { kind: K }>;

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    /** Why the security handlers refused the request: the first refusal, or a 403 or fault such as an outage (security.ts, errorHandler.ts). */
    authFailure?: Error;
  }
}

/** The principal of a request that passed the operation's security requirement. */
export function principalOf<K extends Principal['kind']>(req: Request, ...kinds: K[]): PrincipalOf<K> {
  const p = req.principal;
  if (!p || !(kinds as string[]).includes(p.kind)) {
    throw new Error(`route expects a ${kinds.join('/')} principal; check its security in openapi.yaml`);
  }
  return p as PrincipalOf<K>;
}
