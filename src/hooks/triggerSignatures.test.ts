// Trigger URLs that verify their sender's signature (GitHub, Stripe, Standard Webhooks), through a
// real HTTP server with real bodies, a real store (PostgreSQL; MariaDB too when TEST_MYSQL_URL is
// set) and a real pg-boss queue with an in-process worker. Senders sign with the service's clock
// (Date.now) as they would with theirs; the tolerance is minutes, so no test depends on speed.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type Scheme = 'github' | 'stripe' | 'standard_webhooks';

const hex = (key: string, data: string) => createHmac('sha256', key).update(data).digest('hex');
const WHSEC = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const event = JSON.stringify({ id: 'evt_1', type: 'issues.opened', data: { object: { title: 'Safari' } } });

describe.each(testDialects())('trigger signatures on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function signedTrigger(scheme: Scheme, secret: string) {
    const made = await alice.POST('/api/workflows', { body: { name: 'signed', ...seedGraph('echo') } });
    const workflowId = made.data!.data.id;
    const created = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
      body: { name: scheme, signature: { scheme, secret } },
    });
    if (!created.data) throw new Error(`trigger failed: ${JSON.stringify(created.error)}`);
    return { workflowId, trigger: created.data.data };
  }

  const post = (url: string, body: string, headers: Record<string, string>, type = 'application/json') =>
    fetch(url, { method: 'POST', headers: { 'content-type': type, ...headers }, body });

  const runsOf = async (workflowId: string) =>
    (await alice.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: workflowId } } })).data!.meta
      .total;

  async function expectRefused(res: Response, detail: RegExp) {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as Schemas['Problem'];
    expect(problem).toMatchObject({ status: 401, code: 'invalid_signature' });
    expect(problem.detail).toMatch(detail);
  }

  it('keeps the secret sealed and never shows it: not in the answers, not in the row', async () => {
    const { workflowId, trigger } = await signedTrigger('github', 'gh-webhook-secret');
    expect(trigger.signature).toEqual({ scheme: 'github' });
    expect(JSON.stringify(trigger)).not.toContain('gh-webhook-secret');
    const listed = await alice.GET('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(listed.data!.data[0]!.signature).toEqual({ scheme: 'github' });
    expect(JSON.stringify(listed.data)).not.toContain('gh-webhook-secret');
    const row = await server.ctx.db('workflow_triggers').where({ id: trigger.id }).first();
    expect(row.signature_scheme).toBe('github');
    expect(JSON.stringify(row)).not.toContain('gh-webhook-secret');
  });

  it('github: X-Hub-Signature-256 over the raw body starts a run; a bad or missing one is 401 and starts nothing', async () => {
    const { workflowId, trigger } = await signedTrigger('github', 'gh-webhook-secret');
    const good = await post(trigger.url, event, { 'X-Hub-Signature-256': `sha256=${hex('gh-webhook-secret', event)}` });
    expect(good.status).toBe(202);
    expect(((await good.json()) as { data: Schemas['RunDetail'] }).data.inputs).toEqual({ ticket: event });
    const form = 'payload=%7B%22a%22%3A1%7D';
    const signedForm = await post(
      trigger.url,
      form,
      { 'X-Hub-Signature-256': `sha256=${hex('gh-webhook-secret', form)}` },
      'application/x-www-form-urlencoded',
    );
    expect(signedForm.status).toBe(202);
    await expectRefused(
      await post(trigger.url, event, { 'X-Hub-Signature-256': `sha256=${hex('another-secret', event)}` }),
      /does not match/,
    );
    // Signed, then changed on the way: one space more.
    await expectRefused(
      await post(trigger.url, `${event} `, { 'X-Hub-Signature-256': `sha256=${hex('gh-webhook-secret', event)}` }),
      /does not match/,
    );
    await expectRefused(await post(trigger.url, event, {}), /missing/);
    expect(await runsOf(workflowId)).toBe(2);
  });

  it('stripe: t and v1 over `${t}.${body}`; a wrong, stale or missing one is 401 and starts nothing', async () => {
    const secret = 'whsec_stripe_endpoint_secret';
    const { workflowId, trigger } = await signedTrigger('stripe', secret);
    const header = (key: string, t: number) => ({ 'Stripe-Signature': `t=${t},v1=${hex(key, `${t}.${event}`)}` });
    const now = Math.floor(Date.now() / 1000);
    expect((await post(trigger.url, event, header(secret, now))).status).toBe(202);
    await expectRefused(await post(trigger.url, event, header('whsec_other', now)), /does not match/);
    await expectRefused(await post(trigger.url, event, header(secret, now - 3600)), /tolerance/);
    await expectRefused(await post(trigger.url, event, {}), /missing/);
    expect(await runsOf(workflowId)).toBe(1);
  });

  it('standard webhooks: what the reference library signs starts a run; tampered, stale or missing is 401', async () => {
    const { workflowId, trigger } = await signedTrigger('standard_webhooks', WHSEC);
    const signed = (body: string, at: Date, secret = WHSEC) => ({
      'webhook-id': 'msg_2K8n',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_2K8n', at, body),
    });
    expect((await post(trigger.url, event, signed(event, new Date()))).status).toBe(202);
    await expectRefused(await post(trigger.url, `${event} `, signed(event, new Date())), /does not match/);
    const other = `whsec_${Buffer.from('fedcba9876543210fedcba9876543210').toString('base64')}`;
    await expectRefused(await post(trigger.url, event, signed(event, new Date(), other)), /does not match/);
    await expectRefused(await post(trigger.url, event, signed(event, new Date(Date.now() - 3_600_000))), /tolerance/);
    await expectRefused(await post(trigger.url, event, {}), /missing/);
    expect(await runsOf(workflowId)).toBe(1);
  });

  it('refuses a Standard Webhooks secret that is not whsec_ base64 (400 invalid_field), and an unknown scheme (400)', async () => {
    const made = await alice.POST('/api/workflows', { body: { name: 'signed', ...seedGraph('echo') } });
    const path = { workflow_id: made.data!.data.id };
    const bad = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path },
      body: { signature: { scheme: 'standard_webhooks', secret: 'not-a-whsec' } },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 'invalid_field', errors: [{ pointer: '/body/signature/secret' }] });
    const unknown = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path },
      body: { signature: { scheme: 'hmac-md5' as Scheme, secret: 'x' } },
    });
    expect(unknown.response.status).toBe(400);
    expect(unknown.error).toMatchObject({ code: 'invalid_request' });
    const listed = await alice.GET('/api/workflows/{workflow_id}/triggers', { params: { path } });
    expect(listed.data!.meta.total).toBe(0);
  });
});
