// A user of the workflows API for a test: created in the store, with an API key of the `workflows`
// permission in a namespace named after the login, and a client generated from the contract.
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../../src/context.ts';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';

/** A new user `login` and an API key (`sk_...`) of the `workflows` permission in a namespace of that name. */
export async function workflowsApiKey(ctx: AppContext, login: string): Promise<{ token: string; userId: number }> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(ctx, {
    userId: user.id,
    namespace: login,
    name: 'tests',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return { token, userId: user.id };
}

export async function workflowsUser(
  ctx: AppContext,
  baseUrl: string,
  login: string,
): Promise<{ client: ApiClient; userId: number }> {
  const { token, userId } = await workflowsApiKey(ctx, login);
  return { client: createApiClient(baseUrl, { bearer: token }), userId };
}

export async function workflowsClient(ctx: AppContext, baseUrl: string, login: string): Promise<ApiClient> {
  return (await workflowsUser(ctx, baseUrl, login)).client;
}

/** Saves `workflow` as `client`'s and runs it on `inputs`, waiting up to `waitSeconds` for its end; throws with the problem when either is refused. */
export async function createAndRun(
  client: ApiClient,
  workflow: Schemas['WorkflowCreate'],
  inputs: Record<string, unknown>,
  waitSeconds = 30,
): Promise<Schemas['RunDetail']> {
  const created = await client.POST('/api/workflows', { body: workflow });
  if (!created.data) throw new Error(`create failed: ${JSON.stringify(created.error)}`);
  const { data, error } = await client.POST('/api/workflows/{workflow_id}/run', {
    params: { path: { workflow_id: created.data.data.id }, header: { Prefer: `wait=${waitSeconds}` } },
    body: { inputs },
  });
  if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
  return data.data;
}

/** A client of an existing user's: an API key of the `workflows` permission in a namespace named after the login. */
export async function workflowsClientOf(
  ctx: AppContext,
  baseUrl: string,
  user: { userId: number; login: string },
): Promise<ApiClient> {
  const { token } = await createAccessToken(ctx, {
    userId: user.userId,
    namespace: user.login,
    name: 'tests',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return createApiClient(baseUrl, { bearer: token });
}

/** Saves `workflow` as `client`'s, marked as an MCP tool when `tool` (updateWorkflow `mcp_tool`); its id. */
export async function createWorkflowTool(
  client: ApiClient,
  workflow: Schemas['WorkflowCreate'],
  tool: boolean,
): Promise<string> {
  const { data, error } = await client.POST('/api/workflows', { body: workflow });
  if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
  if (tool) {
    const set = await client.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: data.data.id } },
      body: { mcp_tool: true },
    });
    if (set.data?.data.mcp_tool !== true) throw new Error(`marking it a tool failed: ${JSON.stringify(set.error)}`);
  }
  return data.data.id;
}
