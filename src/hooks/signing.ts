// Standard Webhooks signatures (https://www.standardwebhooks.com/, the scheme Svix publishes):
// `webhook-signature: v1,<base64 HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}">`,
// keyed with the bytes the secret's base64 (after `whsec_`) encodes. Any Standard Webhooks library
// verifies what this signs (src/hooks/callbacks.test.ts checks with npm `standardwebhooks`).
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (the spec asks for 24 to 64). */
export function newCallbackSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The `webhook-signature` header of one attempt. */
export function signatureOf(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one attempt at a message. */
export function webhookHeaders(secret: string, messageId: string, nowMs: number, body: string): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureOf(secret, messageId, timestamp, body),
  };
}
