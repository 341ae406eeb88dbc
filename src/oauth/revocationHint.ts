// RFC 7009 2.1: `token_type_hint` is only a hint. The server looks the token up as the hinted type
// first and, when that finds nothing, as the other; an unknown hint is ignored.

export type RevocableType = 'access_token' | 'refresh_token';

/** The token types to look a presented opaque token up as, in order. */
export function lookupOrder(hint: unknown): RevocableType[] {
  return hint === 'refresh_token' ? ['refresh_token', 'access_token'] : ['access_token', 'refresh_token'];
}
