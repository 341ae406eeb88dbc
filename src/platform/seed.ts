import type { DbContext } from '../context.ts';
import { createAccessToken } from './accessTokens.ts';
import { createApp } from './apps.ts';
import { createOrg } from './orgs.ts';
import { createUser, findUserByLogin } from './users.ts';

export const DEMO = {
  login: 'demo',
  password: 'demo-password',
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
}

/**
 * Seeds a demo user, org, app and API key on first start only: does nothing (returns null) when
 * the `demo` user exists. All or nothing, in one transaction.
 */
export async function seedDemo(ctx: DbContext): Promise<DemoSeed | null> {
  if (await findUserByLogin(ctx, DEMO.login)) return null;
  try {
    return await ctx.db.transaction(async (trx) => {
      const user = await createUser({ db: trx }, { login: DEMO.login, password: DEMO.password, name: DEMO.name });
      const org = await createOrg({ db: trx }, { namespace: DEMO.orgNamespace, name: DEMO.orgName, ownerLogin: DEMO.login });
      const { app, clientSecret } = await createApp({ db: trx }, {
        ownerUserId: user.id,
        name: DEMO.appName,
        description: 'A sample third-party application for trying the authorization-code flow.',
        homepage: DEMO.appHomepage,
        redirectUri: DEMO.appRedirectUri,
      });
      const { token, record } = await createAccessToken({ db: trx }, {
        userId: user.id,
        namespace: DEMO.login,
        name: DEMO.apiKeyName,
        usageScenario: 'trial',
        permissions: ['workflows'],
      });
      return {
        user: { id: user.id, login: user.login, password: DEMO.password },
        org: { id: org.id, namespace: org.namespace },
        app: { id: app.id, name: app.name, client_id: app.client_id, client_secret: clientSecret, redirect_uri: app.redirect_uri },
        apiKey: { id: record.id, namespace: record.namespace, token, permissions: record.permissions },
      };
    });
  } catch (err) {
    // Another process seeded between our check and our insert.
    if ((err as { status?: number }).status === 409 && (await findUserByLogin(ctx, DEMO.login))) return null;
    throw err;
  }
}
