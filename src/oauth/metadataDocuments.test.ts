import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { startMetadataDocumentServer, type MetadataDocumentServer } from '../../test/support/metadataDocumentServer.ts';
import { Browser, createFixture, formFields, insecure, logIn, type Fixture } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';
import { setMetadataDocumentFetchedAt } from './metadataDocuments.store.ts';
import { urlHashOf } from './metadataDocuments.ts';

// Client ID Metadata Documents end to end: a real server and database; the client's document on a
// local https server of the test (trusted by this process, allowed through the outbound guard by
// WORKFLOW_HTTP_ALLOW_HOSTS=localhost), the client's side with oauth4webapi as a public client.

const REDIRECT = 'https://client.example.test/callback';
const exec = promisify(execFile);
const HOUR = 3600 * 1000;

describe.each(testDialects())('Client ID Metadata Documents (%s)', (dialect) => {
  let server: TestServer;
  let docs: MetadataDocumentServer;
  let as: oauth.AuthorizationServer;
  let f: Fixture;
  let paths = 0;

  beforeAll(async () => {
    docs = await startMetadataDocumentServer();
    server = await startTestServer({
      dialect,
      env: { CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'localhost', WORKFLOW_HTTP_ALLOW_HOSTS: 'localhost' },
    });
    const issuer = new URL(server.baseUrl);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    f = await createFixture(server.ctx.db);
  });
  afterAll(async () => {
    await server?.close();
    await docs?.close();
  });

  /** A fresh document path and its client_id URL, serving `fields` over a valid document. */
  function client(fields: Record<string, unknown> = {}, path = `/clients/${++paths}.json`) {
    const clientId = `${docs.origin}${path}`;
    docs.serve(path, {
      client_id: clientId,
      client_name: 'Example MCP Client',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_uri: 'https://client.example.test/',
      ...fields,
    });
    return { clientId, path };
  }

  const authorizeUrl = (clientId: string, challenge: string, more: Record<string, string> = {}) =>
    `/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'user_info',
      state: 'st-md',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...more,
    })}`;

  // The admin CLI on the server's store, as an operator runs it (not process.env: vitest's BASE_URL).
  const cliEnv = () => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    SECRETS_KEY: TEST_SECRETS_KEY,
    DATABASE_URL: server.databaseUrl,
  });
  async function admin(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await exec('sh', ['scripts/node.sh', 'src/cli/admin.ts', ...args, '--json'], { env: cliEnv() });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  async function loggedIn(): Promise<Browser> {
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    return browser;
  }

  /** The error page an authorization request gets: 400, no redirect, its message. */
  async function errorPage(clientId: string): Promise<string> {
    const res = await (await loggedIn()).fetch(authorizeUrl(clientId, 'x'.repeat(43)));
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    return (await res.text()).replace(/&#39;/g, "'").replace(/&quot;/g, '"');
  }

  it('announces client_id_metadata_document_supported in both metadata documents', async () => {
    expect(as.client_id_metadata_document_supported).toBe(true);
    const openid = await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json();
    expect(openid).toMatchObject({ client_id_metadata_document_supported: true });
  });

  it('runs a whole code flow with PKCE for a URL client_id: consent, token, refresh, one fetch', async () => {
    const { clientId, path } = client();
    const browser = await loggedIn();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const consent = await browser.fetch(authorizeUrl(clientId, challenge));
    expect(consent.status).toBe(200);
    const page = await consent.text();
    expect(page).toContain('Example MCP Client');
    expect(page).toMatch(/identified by its metadata document at <strong>localhost<\/strong>/);
    expect(page).toMatch(/has not reviewed it/);
    expect(docs.lastAccept(path)).toBe('application/json');
    const answer = await browser.post('/oauth/authorize/decision', { ...formFields(page), decision: 'allow' });
    expect(answer.status).toBe(303);
    const callback = new URL(answer.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe(REDIRECT);

    const oauthClient: oauth.Client = { client_id: clientId };
    const params = oauth.validateAuthResponse(as, oauthClient, callback, 'st-md');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      oauthClient,
      await oauth.authorizationCodeGrantRequest(as, oauthClient, oauth.None(), params, REDIRECT, verifier, insecure),
    );
    expect(tokens.access_token).toBeTruthy();
    const userinfo = await fetch(`${server.baseUrl}/api/open/v1/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(200);
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      oauthClient,
      await oauth.refreshTokenGrantRequest(as, oauthClient, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    // The consent page and the decision each resolved the client: one fetch, then the cache.
    expect(docs.hits(path)).toBe(1);

    // Settings -> Authorized apps lists it; revoking there kills its tokens.
    const list = await (await browser.fetch('/settings/authorizations')).text();
    expect(list).toContain('Example MCP Client');
    const action = /href="(\/settings\/authorizations\/\d+\/revoke)"/.exec(
      list.slice(list.indexOf('Example MCP Client')),
    )![1]!;
    expect((await browser.post(action, { csrf_token: formFields(list).csrf_token! })).status).toBe(303);
    const after = await fetch(`${server.baseUrl}/api/open/v1/userinfo`, {
      headers: { authorization: `Bearer ${refreshed.access_token}` },
    });
    expect(after.status).toBe(401);
  });

  it('refuses a code exchange with a secret or with another redirect_uri', async () => {
    const { clientId } = client({ redirect_uris: [REDIRECT, 'https://client.example.test/other'] });
    const browser = await loggedIn();
    const verifier = oauth.generateRandomCodeVerifier();
    const consent = await browser.fetch(authorizeUrl(clientId, await oauth.calculatePKCECodeChallenge(verifier)));
    const answer = await browser.post('/oauth/authorize/decision', {
      ...formFields(await consent.text()),
      decision: 'allow',
    });
    const code = new URL(answer.headers.get('location')!).searchParams.get('code')!;
    const token = (fields: Record<string, string>) =>
      fetch(`${server.baseUrl}/api/open/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, ...fields }),
      });
    const withSecret = await token({ client_id: clientId, client_secret: 'guess', redirect_uri: REDIRECT });
    expect(withSecret.status).toBe(401);
    const otherRedirect = await token({ client_id: clientId, redirect_uri: 'https://client.example.test/other' });
    expect(await otherRedirect.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a client_id on a host the operator did not allow', async () => {
    const page = await errorPage(
      `https://127.0.0.1${new URL(docs.origin).port ? `:${new URL(docs.origin).port}` : ''}/c.json`,
    );
    expect(page).toContain('not an acceptable client metadata document URL: 127.0.0.1 is not a host');
  });

  it('refuses a document whose client_id is another URL', async () => {
    const { clientId } = client({ client_id: `${docs.origin}/clients/someone-else.json` });
    expect(await errorPage(clientId)).toContain(
      "The client's metadata document is invalid: the document's client_id is not the URL it was fetched from.",
    );
  });

  it.each([
    ['an http redirect URI', ['http://client.example.test/cb'], 'uses http on a non-loopback host'],
    ['a fragment', ['https://client.example.test/cb#x'], 'has a fragment'],
    ['no redirect URI', [], 'redirect_uris must be a list'],
  ])('refuses a document with %s', async (_name, uris, why) => {
    const { clientId } = client({ redirect_uris: uris });
    expect(await errorPage(clientId)).toContain(`The client's metadata document is invalid: `);
    expect(await errorPage(clientId)).toContain(why);
  });

  it('refuses a document that asks for a secret-based authentication method, or carries a secret', async () => {
    const basic = client({ token_endpoint_auth_method: 'client_secret_basic' });
    expect(await errorPage(basic.clientId)).toContain('token_endpoint_auth_method must be none');
    const secret = client({ client_secret: 'shh' });
    expect(await errorPage(secret.clientId)).toContain('client_secret is not allowed');
  });

  it('refuses an oversized document, a non-JSON one, a 404 and a redirect (not followed)', async () => {
    const big = client();
    docs.serve(big.path, { body: JSON.stringify({ client_id: big.clientId, pad: 'x'.repeat(6000) }) });
    expect(await errorPage(big.clientId)).toContain(
      "The client's metadata document could not be fetched: The response body is larger than 5120 bytes.",
    );
    const html = client();
    docs.serve(html.path, { headers: { 'content-type': 'text/html' }, body: '<html>hello</html>' });
    expect(await errorPage(html.clientId)).toContain(
      "The client's metadata document is invalid: the document is not JSON.",
    );
    const missing = `${docs.origin}/clients/missing.json`;
    expect(await errorPage(missing)).toContain(
      "The client's metadata document could not be fetched: its URL answered HTTP 404.",
    );
    const moved = client();
    const target = client();
    docs.serve(moved.path, { status: 302, headers: { location: target.clientId }, body: '' });
    expect(await errorPage(moved.clientId)).toContain('answered a redirect (HTTP 302), which is not followed');
    expect(docs.hits(target.path)).toBe(0);
  });

  it('refetches after max-age, keeps the stored document when a refetch fails within 24 hours, then refuses', async () => {
    const { clientId, path } = client();
    docs.serve(path, {
      headers: { 'cache-control': 'public, max-age=600' },
      body: JSON.stringify({ client_id: clientId, client_name: 'Cached', redirect_uris: [REDIRECT] }),
    });
    const browser = await loggedIn();
    const open = async () => (await browser.fetch(authorizeUrl(clientId, 'y'.repeat(43)))).status;
    expect(await open()).toBe(200);
    expect(await open()).toBe(200);
    expect(docs.hits(path)).toBe(1);
    const hash = urlHashOf(clientId);
    // Older than its max-age (10 minutes): fetched again.
    await setMetadataDocumentFetchedAt(server.ctx.db, hash, Date.now() - 11 * 60 * 1000);
    expect(await open()).toBe(200);
    expect(docs.hits(path)).toBe(2);
    // Due, and the document is gone: the stored one stands in, within 24 hours of the last good fetch.
    docs.serve(path, { status: 500, body: 'down' });
    await setMetadataDocumentFetchedAt(server.ctx.db, hash, Date.now() - 2 * HOUR);
    expect(await open()).toBe(200);
    expect(docs.hits(path)).toBe(3);
    await setMetadataDocumentFetchedAt(server.ctx.db, hash, Date.now() - 25 * HOUR);
    expect(await errorPage(clientId)).toContain('could not be fetched: its URL answered HTTP 500.');
  });

  it('lets the operator list and forget cached clients; forgetting revokes their tokens', async () => {
    const { clientId } = client({ client_name: 'Forgettable' });
    const browser = await loggedIn();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const consent = await browser.fetch(authorizeUrl(clientId, challenge, { scope: 'openid user_info' }));
    const answer = await browser.post('/oauth/authorize/decision', {
      ...formFields(await consent.text()),
      decision: 'allow',
    });
    const oauthClient: oauth.Client = { client_id: clientId };
    const params = oauth.validateAuthResponse(as, oauthClient, new URL(answer.headers.get('location')!), 'st-md');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      oauthClient,
      await oauth.authorizationCodeGrantRequest(as, oauthClient, oauth.None(), params, REDIRECT, verifier, insecure),
    );
    // The ID token's audience is the URL (oauth4webapi checked it too).
    expect(oauth.getValidatedIdTokenClaims(tokens)?.aud).toBe(clientId);
    const listed = (await admin('client-document', 'list')).data as Array<Record<string, unknown>>;
    expect(listed.find((c) => c.client_id === clientId)).toMatchObject({
      name: 'Forgettable',
      redirect_uris: [REDIRECT],
      max_age_seconds: 3600,
    });
    expect(await admin('client-document', 'forget', '--client-id', clientId)).toEqual({ forgotten: clientId });
    const left = (await admin('client-document', 'list')).data as Array<Record<string, unknown>>;
    expect(left.find((c) => c.client_id === clientId)).toBeUndefined();
    const after = await fetch(`${server.baseUrl}/api/open/v1/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(after.status).toBe(401);
    const again = await exec(
      'sh',
      ['scripts/node.sh', 'src/cli/admin.ts', 'client-document', 'forget', '--client-id', clientId],
      {
        env: cliEnv(),
      },
    ).catch((error: { code: number; stderr: string }) => error);
    expect(again).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`No application with client_id "${clientId}"`),
    });
  });

  it('never takes the id a URL is stored under as a client_id at the authorization endpoint', async () => {
    const { clientId } = client();
    const browser = await loggedIn();
    expect((await browser.fetch(authorizeUrl(clientId, 'z'.repeat(43)))).status).toBe(200);
    const stored = (await server.ctx.db('applications').where({ registration_kind: 'metadata_document' }))
      .map((row: { client_id: string }) => row.client_id)
      .pop()!;
    expect(stored).toMatch(/^md_/);
    expect(await errorPage(stored)).toContain('There is no application with this client_id.');
  });
});

describe('Client ID Metadata Documents off (the default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { WORKFLOW_HTTP_ALLOW_HOSTS: 'localhost' } });
  });
  afterAll(() => server?.close());

  it('takes an https client_id for an unknown client, and says nothing in the metadata', async () => {
    const meta = await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json();
    expect(meta).not.toHaveProperty('client_id_metadata_document_supported');
    const res = await fetch(
      `${server.baseUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: 'https://localhost/client.json',
        redirect_uri: REDIRECT,
      })}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('There is no application with this client_id.');
  });
});
