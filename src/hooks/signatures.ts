// Verifying a sender's signature over a trigger URL's body, as the senders make them: GitHub's
// X-Hub-Signature-256 (HMAC-SHA256 of the raw body, hex), Stripe's Stripe-Signature (`t=...,v1=...`
// over `${t}.${body}`) and Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature `v1,`
// base64 over `${id}.${timestamp}.${body}`, with a `whsec_` base64 secret). Each signature is
// compared in constant time; the timestamped schemes refuse one older or newer than five minutes,
// so a captured request cannot be replayed later.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_SCHEMES = ['github', 'stripe', 'standard_webhooks'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** How far a signed timestamp may be from now, both ways (Stripe's and Standard Webhooks' default). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const hmac = (key: Buffer | string, data: Buffer[]) => {
  const mac = createHmac('sha256', key);
  for (const part of data) mac.update(part);
  return mac.digest();
};

const sameBytes = (expected: Buffer, given: Buffer) =>
  expected.length === given.length && timingSafeEqual(expected, given);

/** The key bytes of a Standard Webhooks secret (`whsec_` + base64), or undefined when it is not one. */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length >= 16 && key.length <= 64 ? key : undefined;
}

type Headers = Record<string, string>;

/** Why a request's signature does not verify, or undefined when it does. `nowMs`: the service's clock. */
export function signatureProblem(
  scheme: SignatureScheme,
  secret: string,
  headers: Headers,
  raw: Buffer,
  nowMs: number,
): string | undefined {
  switch (scheme) {
    case 'github':
      return githubProblem(secret, headers, raw);
    case 'stripe':
      return stripeProblem(secret, headers, raw, nowMs);
    case 'standard_webhooks':
      return standardWebhooksProblem(secret, headers, raw, nowMs);
    default:
      return 'The trigger names a signature scheme this service does not know.'; // fails closed
  }
}

function githubProblem(secret: string, headers: Headers, raw: Buffer): string | undefined {
  const header = headers['x-hub-signature-256'];
  if (header === undefined) return 'The X-Hub-Signature-256 header is missing.';
  const hex = /^sha256=([0-9a-f]{64})$/i.exec(header.trim())?.[1];
  if (!hex || !sameBytes(hmac(secret, [raw]), Buffer.from(hex, 'hex')))
    return 'The X-Hub-Signature-256 signature does not match the body.';
  return undefined;
}

const stale = (seconds: number, nowMs: number) =>
  !Number.isSafeInteger(seconds) || Math.abs(nowMs / 1000 - seconds) > SIGNATURE_TOLERANCE_SECONDS;

function stripeProblem(secret: string, headers: Headers, raw: Buffer, nowMs: number): string | undefined {
  const header = headers['stripe-signature'];
  if (header === undefined) return 'The Stripe-Signature header is missing.';
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  const v1s = parts.filter(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/i.test(v)).map(([, v]) => v!);
  if (t === undefined || !/^\d{1,12}$/.test(t) || v1s.length === 0)
    return 'The Stripe-Signature header has no timestamp or no v1 signature.';
  if (stale(Number(t), nowMs)) return 'The Stripe-Signature timestamp is outside the tolerance (5 minutes).';
  const expected = hmac(secret, [Buffer.from(`${t}.`), raw]);
  // Every candidate is compared (a rolled secret sends two), none short-circuits on the first.
  const matches = v1s.map((v) => sameBytes(expected, Buffer.from(v, 'hex')));
  return matches.includes(true) ? undefined : 'The Stripe-Signature signature does not match the body.';
}

function standardWebhooksProblem(secret: string, headers: Headers, raw: Buffer, nowMs: number): string | undefined {
  const [id, timestamp, header] = [headers['webhook-id'], headers['webhook-timestamp'], headers['webhook-signature']];
  if (id === undefined || timestamp === undefined || header === undefined)
    return 'The webhook-id, webhook-timestamp or webhook-signature header is missing.';
  if (!/^\d{1,12}$/.test(timestamp) || stale(Number(timestamp), nowMs))
    return 'The webhook-timestamp is outside the tolerance (5 minutes).';
  const key = standardWebhooksKey(secret);
  if (!key) return 'The signing secret is not a Standard Webhooks secret.';
  const expected = hmac(key, [Buffer.from(`${id}.${timestamp}.`), raw]);
  const matches = header
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => sameBytes(expected, Buffer.from(s.slice(3), 'base64')));
  return matches.includes(true) ? undefined : 'The webhook-signature does not match the body.';
}
