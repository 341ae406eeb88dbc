import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newCallbackSecret, signatureOf, webhookHeaders } from './signing.ts';

const body = JSON.stringify({ type: 'run.completed', data: { id: 'run_1' } });

describe('Standard Webhooks signatures', () => {
  it("matches the specification's published example", () => {
    expect(
      signatureOf(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('makes secrets of 32 random bytes behind whsec_, never the same twice', () => {
    const secrets = Array.from({ length: 50 }, newCallbackSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    }
    expect(new Set(secrets).size).toBe(secrets.length);
  });

  it('sends the three headers a receiver checks: id, timestamp in whole seconds, signature', () => {
    const headers = webhookHeaders(newCallbackSecret(), 'msg_1', 1_700_000_000_999, body);
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe('1700000000');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('is verified by the standardwebhooks library with the secret, and by no other secret', () => {
    const secret = newCallbackSecret();
    const headers = webhookHeaders(secret, 'msg_2', Date.now(), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newCallbackSecret()).verify(body, headers)).toThrow();
  });

  it('binds the message id, the timestamp and every byte of the body', () => {
    const secret = newCallbackSecret();
    const now = Date.now();
    const headers = webhookHeaders(secret, 'msg_3', now, body);
    const hook = new Webhook(secret);
    expect(() => hook.verify(`${body} `, headers)).toThrow();
    expect(() => hook.verify(body, { ...headers, 'webhook-id': 'msg_4' })).toThrow();
    expect(() => hook.verify(body, { ...headers, 'webhook-timestamp': String(Math.floor(now / 1000) + 1) })).toThrow();
  });

  it('signs a message again the same way: a retry of an attempt carries the same signature for the same second', () => {
    const secret = newCallbackSecret();
    expect(webhookHeaders(secret, 'msg_5', 1_700_000_000_000, body)).toEqual(
      webhookHeaders(secret, 'msg_5', 1_700_000_000_500, body),
    );
    expect(webhookHeaders(secret, 'msg_5', 1_700_000_001_000, body)['webhook-signature']).not.toBe(
      webhookHeaders(secret, 'msg_5', 1_700_000_000_000, body)['webhook-signature'],
    );
  });
});
