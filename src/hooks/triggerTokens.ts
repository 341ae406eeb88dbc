// The shape of trigger tokens (the credential in a trigger URL, `wht_` + base64url of 32 random
// bytes): its first characters after the prefix find its row, a few of them tell triggers apart in
// lists, and only the hash of the whole token is stored.
import { hashToken, newToken } from '../shared/crypto.ts';

export const TRIGGER_TOKEN_PREFIX = 'wht';
const PREFIX = `${TRIGGER_TOKEN_PREFIX}_`;
/** Characters of the token (after `wht_`) that find its row; public, like a key's prefix. */
const LOOKUP_CHARS = 12;
/** Characters shown in lists (`token_prefix`): enough to tell triggers apart. */
const SHOWN_CHARS = 8;
const TOKEN_LENGTH = PREFIX.length + 43; // base64url of 32 bytes

/** A new token, the part that finds it, and its hash (what is stored). */
export function newTriggerToken(): { token: string; lookup: string; hash: string } {
  const token = newToken(TRIGGER_TOKEN_PREFIX);
  return { token, lookup: token.slice(PREFIX.length, PREFIX.length + LOOKUP_CHARS), hash: hashToken(token) };
}

/** The part of a presented token that finds its row; undefined when it is not shaped as one (no store read then). */
export function lookupOf(token: string): string | undefined {
  return token.length === TOKEN_LENGTH && token.startsWith(PREFIX)
    ? token.slice(PREFIX.length, PREFIX.length + LOOKUP_CHARS)
    : undefined;
}

/** What lists show of a trigger's token (`token_prefix`), from its stored lookup part. */
export function shownPrefix(lookup: string): string {
  return `${PREFIX}${lookup.slice(0, SHOWN_CHARS)}`;
}
