// A user of the workflows API for a test: created in the store, with an API key of the `workflows`
// permission in a namespace named after the login, and a client generated from the contract.
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import type { AppContext } from '../../src/context.ts';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';

export async function workflowsUser(
  ctx: AppContext,
  baseUrl: string,
  login: string,
): Promise<{ client: ApiClient; userId: number }> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(ctx, {
    userId: user.id,
    namespace: login,
    name: 'tests',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return { client: createApiClient(baseUrl, { bearer: token }), userId: user.id };
}

export async function workflowsClient(ctx: AppContext, baseUrl: string, login: string): Promise<ApiClient> {
  return (await workflowsUser(ctx, baseUrl, login)).client;
}
