import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken, findUsableAccessTokenByPlaintext } from '../accounts/accessTokens.ts';
import { createOrg, listMembers } from '../accounts/orgs.ts';
import { createUser } from '../accounts/users.ts';

// The settings pages for organizations: the user's list, creating one, and members (owners add by
// username and remove behind a confirm page; a member can leave; the last owner stays).

describe.each(testDialects())('organization settings pages (%s)', (dialect) => {
  let server: TestServer;
  let olga: Browser;
  let mel: Browser;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    for (const login of ['olga', 'mel', 'nina']) await createUser(server.ctx, { login, password: 'test-password-1' });
    olga = new Browser(server.baseUrl);
    mel = new Browser(server.baseUrl);
    expect((await logIn(olga, 'olga', 'test-password-1')).status).toBe(303);
    expect((await logIn(mel, 'mel', 'test-password-1')).status).toBe(303);
  });
  afterAll(() => server?.close());

  async function postOn(
    as: Browser,
    page: string,
    path: string,
    fields: Record<string, string> = {},
  ): Promise<Response> {
    const { csrf_token } = formFields(await (await as.fetch(page)).text());
    return as.post(path, { csrf_token: csrf_token!, ...fields });
  }

  it('creates an organization owned by the user, listed with their role; a taken or malformed namespace names the field', async () => {
    const res = await postOn(olga, '/settings/organizations', '/settings/organizations', {
      namespace: 'Olga-Labs',
      name: 'Olga Labs',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/settings/organizations/olga-labs?done=org-created');
    const list = await (await olga.fetch('/settings/organizations')).text();
    expect(list).toMatch(/Olga Labs[\s\S]*olga-labs[\s\S]*Owner/);

    for (const [namespace, status, message] of [
      ['olga-labs', 409, 'already taken'],
      ['mel', 409, 'already taken'],
      ['-bad-', 400, 'letters, digits'],
    ] as const) {
      const refused = await postOn(olga, '/settings/organizations', '/settings/organizations', {
        namespace,
        name: 'X',
      });
      expect(refused.status, namespace).toBe(status);
      const page = await refused.text();
      expect(page).toMatch(/id="namespace"[^>]*aria-invalid="true" aria-describedby="namespace-error"/);
      expect(page).toMatch(new RegExp(`id="namespace-error">[^<]*${message}`));
    }
  });

  it('an owner adds members by username (an unknown one names the field) and removes them behind a confirm page; their tokens there go', async () => {
    await createOrg(server.ctx, { namespace: 'shop', name: 'Shop', ownerLogin: 'olga' });
    const unknown = await postOn(olga, '/settings/organizations/shop', '/settings/organizations/shop/members', {
      login: 'nobody',
      role: 'member',
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toMatch(
      /id="login"[^>]*aria-invalid="true"[\s\S]*id="login-error">No user with login/,
    );

    const added = await postOn(olga, '/settings/organizations/shop', '/settings/organizations/shop/members', {
      login: 'Mel',
      role: 'member',
    });
    expect(added.status).toBe(303);
    expect((await listMembers(server.ctx, 'shop')).map((m) => [m.login, m.role])).toEqual([
      ['mel', 'member'],
      ['olga', 'owner'],
    ]);
    const melsKey = await createAccessToken(server.ctx, {
      userLogin: 'mel',
      namespace: 'shop',
      name: 'shop key',
      usageScenario: 'paid',
    });

    // A member sees the members but cannot add or remove others.
    const melsView = await (await mel.fetch('/settings/organizations/shop')).text();
    expect(melsView).toContain('olga');
    expect(melsView).not.toContain('id="login"');
    expect(melsView).not.toContain('/members/olga/remove');
    expect(
      (await postOn(mel, '/settings/organizations/shop', '/settings/organizations/shop/members', { login: 'nina' }))
        .status,
    ).toBe(403);
    expect((await mel.fetch('/settings/organizations/shop/members/olga/remove')).status).toBe(404);
    expect(
      (await postOn(mel, '/settings/organizations/shop', '/settings/organizations/shop/members/olga/remove')).status,
    ).toBe(404);

    const confirm = await (await olga.fetch('/settings/organizations/shop/members/mel/remove')).text();
    expect(confirm).toContain('Remove mel from Shop?');
    expect(confirm).toContain('their access tokens in it are deleted');
    const removed = await postOn(
      olga,
      '/settings/organizations/shop/members/mel/remove',
      '/settings/organizations/shop/members/mel/remove',
    );
    expect(removed.status).toBe(303);
    expect(removed.headers.get('location')).toBe('/settings/organizations/shop?done=member-removed');
    expect((await listMembers(server.ctx, 'shop')).map((m) => m.login)).toEqual(['olga']);
    expect(await findUsableAccessTokenByPlaintext(server.ctx, melsKey.token)).toBeUndefined();
    // No longer a member: the org is not found for them.
    expect((await mel.fetch('/settings/organizations/shop')).status).toBe(404);
  });

  it('a member can leave; the last owner cannot, and is told why', async () => {
    await createOrg(server.ctx, { namespace: 'club', name: 'Club', ownerLogin: 'olga' });
    await postOn(olga, '/settings/organizations/club', '/settings/organizations/club/members', {
      login: 'mel',
      role: 'member',
    });
    expect(await (await mel.fetch('/settings/organizations/club/members/mel/remove')).text()).toContain('Leave Club?');
    const left = await postOn(mel, '/settings/organizations', '/settings/organizations/club/members/mel/remove');
    expect(left.headers.get('location')).toBe('/settings/organizations?done=org-left');

    const refused = await postOn(
      olga,
      '/settings/organizations/club',
      '/settings/organizations/club/members/olga/remove',
    );
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('class="error"');
    expect((await listMembers(server.ctx, 'club')).map((m) => m.login)).toEqual(['olga']);
  });

  it('answers 404 for an organization the user is not in, and refuses forms without the CSRF token', async () => {
    await createOrg(server.ctx, { namespace: 'secret-org', name: 'Secret', ownerLogin: 'nina' });
    expect((await olga.fetch('/settings/organizations/secret-org')).status).toBe(404);
    expect((await olga.fetch('/settings/organizations/no-such-org')).status).toBe(404);
    expect(
      (await postOn(olga, '/settings/organizations', '/settings/organizations/secret-org/members', { login: 'olga' }))
        .status,
    ).toBe(404);
    expect((await olga.post('/settings/organizations', { namespace: 'sneaky', name: 'S' })).status).toBe(403);
    expect((await listMembers(server.ctx, 'secret-org')).map((m) => m.login)).toEqual(['nina']);
  });
});
