// The delivery id a webhook sender puts on each delivery and keeps on its redeliveries: Standard
// Webhooks' `webhook-id`, GitHub's `X-GitHub-Delivery`, and for Stripe (which has no such header)
// the event's `id` in a body signed with `Stripe-Signature`. A trigger turns it into its run's
// Idempotency-Key (src/runs/deliveryStarts.ts), so a redelivery starts nothing new.
import { createHash } from 'node:crypto';
import type { HookBody } from './hookBody.ts';
import type { DeliveryKey } from '../runs/deliveryStarts.ts';

/** Ids this long or with other than visible ASCII are kept as their hash (the key column is 191 characters). */
const ID_MAX_CHARS = 120;

function stripeEventId(body: HookBody): string | undefined {
  if (body.headers['stripe-signature'] === undefined || body.kind !== 'json') return undefined;
  const value = body.value as { id?: unknown; object?: unknown } | null;
  return value && typeof value === 'object' && value.object === 'event' && typeof value.id === 'string'
    ? value.id
    : undefined;
}

/** The sender's delivery id of this request, if it carries one. */
export function deliveryIdOf(body: HookBody): string | undefined {
  const id = (body.headers['webhook-id'] ?? body.headers['x-github-delivery'] ?? stripeEventId(body))?.trim();
  return id ? id : undefined;
}

/** The start's key for this trigger's delivery, or undefined without an id or with dedupe off (window 0). */
export function deliveryKeyOf(
  triggerId: string,
  body: HookBody,
  now: number,
  windowSeconds: number,
): DeliveryKey | undefined {
  const id = deliveryIdOf(body);
  if (id === undefined || windowSeconds <= 0) return undefined;
  const shown =
    id.length <= ID_MAX_CHARS && /^[\x21-\x7e]+$/.test(id)
      ? id
      : `sha256:${createHash('sha256').update(id).digest('base64url')}`;
  return { key: `delivery:${triggerId}:${shown}`, since: now - windowSeconds * 1000 };
}
