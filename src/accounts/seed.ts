import type { AppContext } from '../context.ts';
import { createWorkflow, type WorkflowCreate } from '../workflows/service.ts';
import { createAccessToken } from './accessTokens.ts';
import { createApp } from './apps.ts';
import { createOrg } from './orgs.ts';
import { createUser, findUserByLogin } from './users.ts';

export const DEMO = {
  login: 'demo',
  password: 'horse-battery-staple',
  name: 'Demo User',
  orgNamespace: 'demo-org',
  orgName: 'Demo Org',
  appName: 'Demo App',
  appHomepage: 'http://localhost:4000',
  appRedirectUri: 'http://localhost:4000/callback',
  apiKeyName: 'Demo API key',
} as const;

/** What the first start created, with the plaintext secrets to print once. */
export interface DemoSeed {
  user: { id: number; login: string; password: string };
  org: { id: number; namespace: string };
  app: { id: number; name: string; client_id: string; client_secret: string; redirect_uri: string };
  apiKey: { id: number; namespace: string; token: string; permissions: string[] };
  workflows: { id: string; name: string }[];
}

/**
 * The demo's workflows, which show what the engine does with no model provider: the workflow
 * docs' branch example, a run that streams for a few seconds (`echo-slow`: watch it live, cancel it),
 * and a call that fails twice and succeeds on its third attempt (`echo-fail-2`). Without the demo
 * models (DEMO_MODELS off) the last two use `echo`.
 */
export function demoWorkflows(demoModels: boolean): WorkflowCreate[] {
  const model = (demo: string) => (demoModels ? demo : 'echo');
  return [
    {
      name: 'Triage',
      description:
        'A branch: urgent tickets page someone (an llm_call), the others are queued (a template). Try a ticket with "urgent" in it, and one without.',
      nodes: [
        { id: 'ticket', type: 'text_input', config: { variable: 'ticket' } },
        {
          id: 'is_urgent',
          type: 'condition',
          config: { left: '{{ inputs.ticket | downcase }}', operator: 'contains', right: 'urgent' },
        },
        { id: 'page', type: 'llm_call', config: { model: 'echo', prompt: 'Page someone: {{ inputs.ticket }}' } },
        { id: 'queue', type: 'template', config: { template: 'Queued: {{ inputs.ticket }}' } },
        { id: 'result', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'ticket', to: 'is_urgent' },
        { from: 'is_urgent', to: 'page', branch: 'true' },
        { from: 'is_urgent', to: 'queue', branch: 'false' },
        { from: 'page', to: 'result' },
        { from: 'queue', to: 'result' },
      ],
    },
    {
      name: 'Slow summary',
      description: `Streams its answer word by word over a few seconds (the demo model ${model('echo-slow')}): watch the run page follow it, or cancel it.`,
      nodes: [
        { id: 'text', type: 'text_input', config: { variable: 'text' } },
        {
          id: 'summarise',
          type: 'llm_call',
          config: {
            model: model('echo-slow'),
            system_prompt: 'Summarise in one paragraph.',
            prompt: '{{ inputs.text }}',
          },
        },
        { id: 'summary', type: 'text_output', config: { format: 'markdown' } },
      ],
      edges: [
        { from: 'text', to: 'summarise' },
        { from: 'summarise', to: 'summary' },
      ],
    },
    {
      name: 'Flaky call',
      description: `Its model call fails twice and succeeds on the third attempt (the demo model ${model('echo-fail-2')}, retried up to 3 times); set max_attempts to 2 and the run fails.`,
      nodes: [
        { id: 'question', type: 'text_input', config: { variable: 'question' } },
        {
          id: 'answer',
          type: 'llm_call',
          config: {
            model: model('echo-fail-2'),
            prompt: '{{ inputs.question }}',
            retry: { max_attempts: 3, backoff_seconds: 0.5 },
          },
        },
        { id: 'result', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'question', to: 'answer' },
        { from: 'answer', to: 'result' },
      ],
    },
  ];
}

/**
 * Seeds a demo user, org, app, API key and workflows on first start only: does nothing (returns
 * null) when the `demo` user exists. All or nothing, in one transaction.
 */
export async function seedDemo(ctx: Pick<AppContext, 'db' | 'config' | 'now'>): Promise<DemoSeed | null> {
  if (await findUserByLogin(ctx, DEMO.login)) return null;
  try {
    return await ctx.db.transaction(async (trx) => {
      const user = await createUser({ db: trx }, { login: DEMO.login, password: DEMO.password, name: DEMO.name });
      const org = await createOrg(
        { db: trx },
        { namespace: DEMO.orgNamespace, name: DEMO.orgName, ownerLogin: DEMO.login },
      );
      const { app, clientSecret } = await createApp(
        { db: trx },
        {
          ownerUserId: user.id,
          name: DEMO.appName,
          description: 'A sample third-party application for trying the authorization-code flow.',
          homepage: DEMO.appHomepage,
          redirectUri: DEMO.appRedirectUri,
        },
      );
      const { token, record } = await createAccessToken(
        { db: trx },
        {
          userId: user.id,
          namespace: DEMO.login,
          name: DEMO.apiKeyName,
          usageScenario: 'trial',
          permissions: ['workflows'],
        },
      );
      const workflows = [];
      for (const body of demoWorkflows(ctx.config.DEMO_MODELS))
        workflows.push(await createWorkflow({ db: trx, config: ctx.config, now: ctx.now }, user.id, body));
      return {
        user: { id: user.id, login: user.login, password: DEMO.password },
        org: { id: org.id, namespace: org.namespace },
        app: {
          id: app.id,
          name: app.name,
          client_id: app.client_id,
          client_secret: clientSecret,
          redirect_uri: app.redirect_uri,
        },
        apiKey: { id: record.id, namespace: record.namespace, token, permissions: record.permissions },
        workflows: workflows.map((w) => ({ id: w.id, name: w.name })),
      };
    });
  } catch (err) {
    // Another process seeded between our check and our insert.
    if ((err as { status?: number }).status === 409 && (await findUserByLogin(ctx, DEMO.login))) return null;
    throw err;
  }
}
