// The value types of environment variables: unset or blank means the default, whole numbers in a
// range, booleans in words, URLs of given schemes, key-encryption keys. Each error names the rule
// and, where it is safe, the value it got (never a key or a database URL).
import { z } from 'zod';
import { parseAllowHosts } from './outbound/allowList.ts';

// Unset and empty variables both mean "use the default".
export const blankToUndefined = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

export function integer(fallback: number, min: number, max: number) {
  return z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^\d+$/, { error: (i) => `must be a whole number between ${min} and ${max} (got "${String(i.input)}")` })
      .transform(Number)
      .refine((n) => n >= min && n <= max, {
        error: (i) => `must be between ${min} and ${max} (got ${String(i.input)})`,
      })
      .optional()
      .transform((n) => n ?? fallback),
  );
}

export const booleanText = z
  .string()
  .transform((s) => s.trim().toLowerCase())
  .refine((s) => ['true', 'false', '1', '0', 'yes', 'no'].includes(s), {
    error: (i) => `must be true or false (got "${String(i.input)}")`,
  })
  .transform((s) => s === 'true' || s === '1' || s === 'yes');

export function httpUrl() {
  return z.string().refine(
    (s) => {
      try {
        const u = new URL(s);
        return u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        return false;
      }
    },
    { error: (i) => `must be an http:// or https:// URL (got "${String(i.input)}")` },
  );
}

export function urlWithScheme(schemes: string[], example: string) {
  return z.string().refine(
    (s) => {
      try {
        return schemes.includes(new URL(s).protocol);
      } catch {
        return false;
      }
    },
    // Never echo a database URL: it usually carries a password.
    { error: `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}, e.g. ${example}` },
  );
}

/** A key-encryption key: base64 (or base64url) of exactly 32 bytes. Never echoed in an error. */
export function parseKek(text: string): Buffer | null {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return null;
  const key = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
  return key.length === 32 ? key : null;
}

export const KEK_HINT = 'must be 32 random bytes in base64, e.g. the output of `openssl rand -base64 32`';

/** A comma-separated list of host names, lower-cased, blanks dropped. */
export function hostList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
}

const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** Exact host names, comma-separated (no wildcards, ports or schemes); read with hostList. */
export function hostNames() {
  return z.preprocess(
    blankToUndefined,
    z
      .string()
      .superRefine((s, ctx) => {
        const bad = hostList(s).filter((h) => !HOST_NAME.test(h));
        if (bad.length)
          ctx.addIssue({
            code: 'custom',
            message: `not host names: ${bad.join(', ')} (exact host names, comma-separated)`,
          });
      })
      .optional(),
  );
}

/** WORKFLOW_HTTP_ALLOW_HOSTS: the outbound guard's allow list, every entry checked at start. */
export function allowHosts() {
  return z.preprocess(
    blankToUndefined,
    z
      .string()
      .superRefine((s, ctx) => {
        const parsed = parseAllowHosts(s);
        if ('problems' in parsed)
          ctx.addIssue({
            code: 'custom',
            message: `${parsed.problems.join('; ')} (entries: host names, *.domains, IP addresses, CIDR ranges)`,
          });
      })
      .optional(),
  );
}
