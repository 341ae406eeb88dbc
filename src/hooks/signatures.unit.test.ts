import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signatureProblem, standardWebhooksKey } from './signatures.ts';

const body = Buffer.from('{"action":"opened","issue":{"number":7}}');
const now = 1_764_300_000_000;
const hex = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest('hex');

describe('github signatures', () => {
  const good = { 'x-hub-signature-256': `sha256=${hex('s3cret', body.toString())}` };
  it('verifies the HMAC of the raw body, and nothing else', () => {
    expect(signatureProblem('github', 's3cret', good, body, now)).toBeUndefined();
    expect(signatureProblem('github', 'other', good, body, now)).toMatch(/does not match/);
    expect(signatureProblem('github', 's3cret', good, Buffer.from(body.toString() + ' '), now)).toMatch(
      /does not match/,
    );
    expect(signatureProblem('github', 's3cret', { 'x-hub-signature-256': 'sha256=zz' }, body, now)).toMatch(
      /does not match/,
    );
    expect(signatureProblem('github', 's3cret', {}, body, now)).toMatch(/missing/);
  });
});

describe('stripe signatures', () => {
  const t = String(now / 1000);
  const header = (secret: string, at = t) => ({
    'stripe-signature': `t=${at},v1=${hex(secret, `${at}.${body}`)},v0=abc`,
  });
  it('verifies v1 over t.body within five minutes', () => {
    expect(signatureProblem('stripe', 'whsec_abc', header('whsec_abc'), body, now)).toBeUndefined();
    expect(signatureProblem('stripe', 'whsec_abc', header('whsec_other'), body, now)).toMatch(/does not match/);
    const old = String(now / 1000 - 301);
    expect(signatureProblem('stripe', 'whsec_abc', header('whsec_abc', old), body, now)).toMatch(/tolerance/);
    expect(signatureProblem('stripe', 'whsec_abc', { 'stripe-signature': 'v1=00' }, body, now)).toMatch(/no timestamp/);
    expect(signatureProblem('stripe', 'whsec_abc', {}, body, now)).toMatch(/missing/);
  });
});

describe('standard webhooks signatures', () => {
  const secret = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
  const signed = (at: Date, key = secret) => {
    const signature = new Webhook(key).sign('msg_1', at, body.toString());
    return {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    };
  };
  it('verifies what the reference library signs, within five minutes', () => {
    expect(signatureProblem('standard_webhooks', secret, signed(new Date(now)), body, now)).toBeUndefined();
    const other = `whsec_${Buffer.from('b'.repeat(32)).toString('base64')}`;
    expect(signatureProblem('standard_webhooks', secret, signed(new Date(now), other), body, now)).toMatch(
      /does not match/,
    );
    expect(signatureProblem('standard_webhooks', secret, signed(new Date(now - 400_000)), body, now)).toMatch(
      /tolerance/,
    );
    expect(signatureProblem('standard_webhooks', secret, {}, body, now)).toMatch(/missing/);
  });
  it('reads only whsec_ base64 secrets of 16 bytes or more', () => {
    expect(standardWebhooksKey(secret)).toHaveLength(32);
    expect(standardWebhooksKey('whsec_not base64!')).toBeUndefined();
    expect(standardWebhooksKey('whsec_YWJj')).toBeUndefined();
  });
});
