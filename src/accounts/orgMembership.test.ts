import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from './accessTokens.ts';
import { addMember, createOrg, removeMember } from './orgs.ts';
import { createUser } from './users.ts';

describe('organization keys of a member who leaves', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  const listWorkflows = (key: string) =>
    fetch(`${server.baseUrl}/api/workflows`, { headers: { authorization: `Bearer ${key}` } });

  it('a removed member re-added later does not get their old organization keys back', async () => {
    await createUser(server.ctx, { login: 'boss', password: 'b-o-s-s-password' });
    await createUser(server.ctx, { login: 'temp', password: 't-e-m-p-password' });
    await createOrg(server.ctx, { namespace: 'firm', name: 'Firm', ownerLogin: 'boss' });
    await addMember(server.ctx, 'firm', 'temp');
    const { token } = await createAccessToken(server.ctx, {
      userLogin: 'temp',
      namespace: 'firm',
      name: 'firm key',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    const personal = await createAccessToken(server.ctx, {
      userLogin: 'temp',
      namespace: 'temp',
      name: 'own key',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    expect((await listWorkflows(token)).status).toBe(200);

    await removeMember(server.ctx, 'firm', 'temp');
    expect((await listWorkflows(token)).status).toBe(401);
    await addMember(server.ctx, 'firm', 'temp');
    expect((await listWorkflows(token)).status).toBe(401);
    // Their keys elsewhere are untouched.
    expect((await listWorkflows(personal.token)).status).toBe(200);
  });
});
