// The claims a proxy token carries (DESIGN.md "Proxy token"), and how a verified payload is read
// back into them: anything not of its type refuses the token, whoever signed it.
import type { JWTPayload } from 'jose';
import type { UsageScenario } from '../accounts/accessTokens.ts';

export interface ProxyTokenSubject {
  userId: number;
  clientId: string;
  /** The OAuth authorization (grant) the app holds; revoking it kills the token. */
  authorizationId: number;
  /** The token chain (its code) it was minted through; revoking the chain kills it (claim `cid`). */
  chainId?: number | undefined;
  accessTokenId: number;
  namespace: string;
  usageScenario: UsageScenario;
  /**
   * The DPoP key (RFC 7638 thumbprint) of the OAuth access token it was minted from, when that one
   * is bound (RFC 9449 6.1 `cnf.jkt`): the gateway then wants a proof of the same key.
   */
  jkt?: string | undefined;
}

export interface ProxyClaims extends ProxyTokenSubject {
  jti: string;
  exp: number;
}

const positiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

/**
 * The claims of a verified proxy token's payload, or null when one is missing or not of its type:
 * `sub` a positive integer in its canonical spelling, `exp`, `token_id` and `aid` positive
 * integers, `cid` one when present, `usage_scenario` paid or trial, `cnf` an object with a
 * non-empty string `jkt` when present.
 */
export function claimsOf(payload: JWTPayload): ProxyClaims | null {
  const { sub, jti, exp, client_id, token_id, namespace, usage_scenario, aid, cid, cnf } = payload;
  const userId = Number(sub);
  if (!positiveInt(userId) || String(userId) !== sub) return null;
  if (typeof jti !== 'string' || !positiveInt(exp) || typeof client_id !== 'string' || typeof namespace !== 'string')
    return null;
  if (!positiveInt(token_id) || !positiveInt(aid) || (usage_scenario !== 'paid' && usage_scenario !== 'trial'))
    return null;
  if (cid !== undefined && !positiveInt(cid)) return null;
  let jkt: string | undefined;
  if (cnf !== undefined) {
    const bound = (cnf as { jkt?: unknown } | null)?.jkt;
    if (typeof bound !== 'string' || bound.length === 0) return null;
    jkt = bound;
  }
  return {
    userId,
    clientId: client_id,
    authorizationId: aid,
    chainId: cid,
    accessTokenId: token_id,
    namespace,
    usageScenario: usage_scenario,
    ...(jkt === undefined ? {} : { jkt }),
    jti,
    exp,
  };
}
