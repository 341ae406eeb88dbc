// Changing a trigger in place (updateTrigger) and a sender's redelivery answered with the run its
// first delivery started (runHook's delivery ids), through a real HTTP server, a real store
// (PostgreSQL; MariaDB too when TEST_MYSQL_URL is set) and a real pg-boss queue with a worker.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

const hex = (key: string, data: string) => createHmac('sha256', key).update(data).digest('hex');
const WHSEC = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

describe.each(testDialects())('trigger updates and redeliveries on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
    bob = await workflowsClient(server.ctx, server.baseUrl, 'bob');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function trigger(body: Schemas['TriggerCreate'] = {}) {
    const made = await alice.POST('/api/workflows', { body: { name: 'hooked', ...seedGraph('echo') } });
    const workflowId = made.data!.data.id;
    const created = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
      body,
    });
    if (!created.data) throw new Error(`trigger failed: ${JSON.stringify(created.error)}`);
    const t = created.data.data;
    return { workflowId, trigger: t, path: { workflow_id: workflowId, trigger_id: t.id } };
  }

  const post = (url: string, body: string, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  const started = async (res: Response) => {
    expect(res.status, await res.clone().text()).toBe(202);
    return ((await res.json()) as { data: Schemas['RunDetail'] }).data;
  };

  const runsOf = async (workflowId: string) =>
    (await alice.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: workflowId } } })).data!.meta
      .total;

  it('changes name and inputs templates in place: the URL stays, {} goes back to the default reading', async () => {
    const { trigger: t, path } = await trigger({ name: 'first' });
    const body = JSON.stringify({ issue: { title: 'Safari export' } });
    const changed = await alice.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path },
      body: { name: 'second', inputs: { ticket: 'title: {{ body.issue.title }}' } },
    });
    expect(changed.response.status).toBe(200);
    expect(changed.data!.data).toMatchObject({ id: t.id, name: 'second', token_prefix: t.token_prefix });
    expect(changed.data!.data).not.toHaveProperty('url');
    expect((await started(await post(t.url, body))).inputs).toEqual({ ticket: 'title: Safari export' });
    const reset = await alice.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path },
      body: { inputs: {} },
    });
    expect(reset.data!.data).not.toHaveProperty('inputs');
    expect((await started(await post(t.url, body))).inputs).toEqual({ ticket: body });
  });

  it('checks as on create (400 naming the field), and is 404 for another user’s or an unknown trigger', async () => {
    const { path } = await trigger();
    const bad = await alice.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path },
      body: { inputs: { nope: '{{ body }}' } },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 'invalid_field', errors: [{ pointer: '/body/inputs/nope' }] });
    const extra = await alice.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path },
      body: { token: 'x' } as Schemas['TriggerUpdate'],
    });
    expect(extra.response.status).toBe(400);
    const foreign = await bob.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path },
      body: { name: 'mine now' },
    });
    expect(foreign.response.status).toBe(404);
    const unknown = await alice.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path: { ...path, trigger_id: 'trg_01JD6Z5M3N8P0Q2R4S6T8V0W' } },
      body: { name: 'x' },
    });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error).toMatchObject({ code: 'trigger_not_found' });
  });

  it('turns signatures on, rotates the secret only when sent, changes the scheme keeping it, and turns them off', async () => {
    const { workflowId, trigger: t, path } = await trigger();
    const event = JSON.stringify({ ref: 'refs/heads/main' });
    const github = (secret: string) => ({ 'X-Hub-Signature-256': `sha256=${hex(secret, event)}` });
    const patch = (body: Schemas['TriggerUpdate']) =>
      alice.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', { params: { path }, body });

    const noSecret = await patch({ signature: { scheme: 'github' } });
    expect(noSecret.response.status).toBe(400);
    expect(noSecret.error).toMatchObject({ code: 'invalid_field', errors: [{ pointer: '/body/signature/secret' }] });

    expect((await patch({ signature: { scheme: 'github', secret: 'one' } })).data!.data.signature).toEqual({
      scheme: 'github',
    });
    expect((await post(t.url, event)).status).toBe(401);
    await started(await post(t.url, event, github('one')));
    // A name change keeps the secret.
    await patch({ name: 'renamed' });
    await started(await post(t.url, event, github('one')));
    // Rotated: the old secret no longer verifies.
    await patch({ signature: { scheme: 'github', secret: 'two' } });
    expect((await post(t.url, event, github('one'))).status).toBe(401);
    await started(await post(t.url, event, github('two')));
    // Stripe's scheme keeps GitHub's secret; Standard Webhooks cannot use it.
    const stripe = await patch({ signature: { scheme: 'stripe' } });
    expect(stripe.data!.data.signature).toEqual({ scheme: 'stripe' });
    const now = Math.floor(Date.now() / 1000);
    await started(await post(t.url, event, { 'Stripe-Signature': `t=${now},v1=${hex('two', `${now}.${event}`)}` }));
    const whsec = await patch({ signature: { scheme: 'standard_webhooks' } });
    expect(whsec.response.status).toBe(400);
    expect(whsec.error).toMatchObject({ errors: [{ pointer: '/body/signature/scheme' }] });
    // Off: no signature needed, and the secret is gone from the row.
    expect((await patch({ signature: { scheme: 'none' } })).data!.data).not.toHaveProperty('signature');
    await started(await post(t.url, event));
    const row = await server.ctx.db('workflow_triggers').where({ id: t.id }).first();
    expect(row.signature_secret).toBeNull();
    expect(await runsOf(workflowId)).toBe(5);
  });

  it('answers a GitHub redelivery (same X-GitHub-Delivery) with the first run; another id starts another', async () => {
    const { workflowId, trigger: t } = await trigger({ signature: { scheme: 'github', secret: 's' } });
    const event = JSON.stringify({ ref: 'refs/heads/main' });
    const headers = (id: string) => ({ 'X-GitHub-Delivery': id, 'X-Hub-Signature-256': `sha256=${hex('s', event)}` });
    const first = await started(await post(t.url, event, headers('72d3162e-cc78-11e3-81ab-4c9367dc0958')));
    const again = await started(await post(t.url, event, headers('72d3162e-cc78-11e3-81ab-4c9367dc0958')));
    expect(again.id).toBe(first.id);
    const other = await started(await post(t.url, event, headers('0b989ba4-242f-11e5-81e1-c7b6b5e4d4d4')));
    expect(other.id).not.toBe(first.id);
    // A client's own Idempotency-Key names the start instead.
    const keyed = await started(
      await post(t.url, event, { ...headers('72d3162e-cc78-11e3-81ab-4c9367dc0958'), 'Idempotency-Key': 'mine' }),
    );
    expect(keyed.id).not.toBe(first.id);
    expect(await runsOf(workflowId)).toBe(3);
  });

  it('answers a redelivery with the first run without reading its body again: templates changed since that fail on it', async () => {
    const { workflowId, trigger: t, path } = await trigger({ inputs: { ticket: '{{ body.text }}' } });
    const headers = { 'X-GitHub-Delivery': '5f1c2a7e-0c4b-4c8e-9d51-3f0f1f7f2a10' };
    const body = JSON.stringify({ text: 'not json' });
    const first = await started(await post(t.url, body, headers));
    const changed = await alice.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path },
      body: { inputs: { ticket: '{{ body.text | parse_json }}' } },
    });
    expect(changed.response.status, JSON.stringify(changed.error)).toBe(200);
    const again = await started(await post(t.url, body, headers));
    expect(again.id).toBe(first.id);
    // A new delivery of the same body is read through the new template, which fails on it.
    const fresh = await post(t.url, body, { 'X-GitHub-Delivery': '9a0e3b1c-5d2f-4e6a-8b7c-1d2e3f4a5b6c' });
    expect(fresh.status).toBe(400);
    expect(await runsOf(workflowId)).toBe(1);
  });

  it('answers a Standard Webhooks retry (same webhook-id, new timestamp and signature, other inputs) with the first run', async () => {
    const {
      workflowId,
      trigger: t,
      path,
    } = await trigger({ signature: { scheme: 'standard_webhooks', secret: WHSEC } });
    // The input reads the timestamp, so a retry's inputs differ: still the same delivery.
    await alice.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path },
      body: { inputs: { ticket: '{{ headers["webhook-timestamp"] }} {{ body.type }}' } },
    });
    const event = JSON.stringify({ type: 'invoice.paid' });
    const signed = (at: Date) => ({
      'webhook-id': 'msg_2K8n',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(WHSEC).sign('msg_2K8n', at, event),
    });
    const first = await started(await post(t.url, event, signed(new Date(Date.now() - 60_000))));
    const retry = await started(await post(t.url, event, signed(new Date())));
    expect(retry.id).toBe(first.id);
    expect(await runsOf(workflowId)).toBe(1);
  });

  it('answers a Stripe event sent again (same event id) with the first run, and starts anew after the window', async () => {
    const { workflowId, trigger: t } = await trigger({ signature: { scheme: 'stripe', secret: 'whsec_s' } });
    const event = JSON.stringify({ id: 'evt_1QXyz', object: 'event', type: 'invoice.paid' });
    const signed = () => {
      const now = Math.floor(Date.now() / 1000);
      return { 'Stripe-Signature': `t=${now},v1=${hex('whsec_s', `${now}.${event}`)}` };
    };
    const first = await started(await post(t.url, event, signed()));
    expect((await started(await post(t.url, event, signed()))).id).toBe(first.id);
    // Its window (3 days by default) passed: the same id starts a new run, which redeliveries then name.
    await server.ctx
      .db('runs')
      .where({ id: first.id })
      .update({ created_at: first.created_at ? Date.parse(first.created_at) - 4 * 86_400_000 : 0 });
    const later = await started(await post(t.url, event, signed()));
    expect(later.id).not.toBe(first.id);
    expect((await started(await post(t.url, event, signed()))).id).toBe(later.id);
    expect(await runsOf(workflowId)).toBe(2);
  });
});
