// An MCP client's OAuth side as the official SDK runs it: an OAuthClientProvider (the SDK's public
// interface) whose user agent is headless Chromium signing in on our login page and allowing on
// our consent page, the code caught at the client's loopback redirect URI. The SDK does the rest
// itself: discovery from the 401, PKCE, the code exchange, refreshing an expired token.
import type { Page } from 'playwright-core';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { createUser } from '../../src/accounts/users.ts';
import type { TestServer } from './server.ts';

/** The client's redirect URI: a loopback one (RFC 8252 7.3), caught by the page before any network. */
export const MCP_REDIRECT_URI = 'http://127.0.0.1:47600/callback';

/** Who signs in on our pages. */
export interface McpUser {
  userId: number;
  login: string;
  password: string;
}

let users = 0;
/**
 * A user of the service, and nothing else: the MCP client is no app they registered. It registers
 * itself (RFC 7591) when the SDK finds `registration_endpoint` (the server runs with
 * CLIENT_REGISTRATION=open), as MCP clients do.
 */
export async function createMcpUser(server: TestServer): Promise<McpUser> {
  users += 1;
  const login = `mcpuser${users}x${Math.floor(Math.random() * 1e6)}`;
  const password = 'correct horse battery';
  const user = await createUser({ db: server.ctx.db }, { login, password, name: `MCP user ${users}` });
  return { userId: user.id, login, password };
}

/** One HTTP exchange of the SDK: MCP requests and its OAuth requests alike. */
export interface Exchange {
  method: string;
  /** The path only: the service's origin is the test server's. */
  path: string;
  status: number;
  /** Whether it carried an Authorization header. */
  authorized: boolean;
}

/** What the provider did, for the test to assert on. */
export interface ProviderLog {
  /** Authorization URLs the SDK sent the user to. */
  authorizations: URL[];
  /** Every token set the SDK saved (after the code exchange, after each refresh). */
  tokens: OAuthTokens[];
  /** Every request the SDK made through its transport, in order. */
  exchanges: Exchange[];
  /** The text of each consent page the user was shown. */
  consentPages: string[];
}

/**
 * The SDK's provider, in memory; `user` signs in on `page` when the SDK sends them to authorize.
 * The code the redirect carries waits in `code` for `transport.finishAuth`.
 */
export class ChromiumOAuthProvider implements OAuthClientProvider {
  readonly log: ProviderLog = { authorizations: [], tokens: [], exchanges: [], consentPages: [] };
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  private caught: Promise<string> | undefined;

  private readonly page: Page;
  private readonly user: McpUser;

  /** Without client information: the SDK registers the client itself, and saves what it got. */
  constructor(page: Page, user: McpUser) {
    this.page = page;
    this.user = user;
  }

  get redirectUrl(): string {
    return MCP_REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP SDK test client',
      redirect_uris: [MCP_REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A public client, as a native MCP client is: no secret to keep, PKCE instead (RFC 8252 8.4).
      token_endpoint_auth_method: 'none',
      scope: 'workflows:run',
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
    this.log.tokens.push(tokens);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** The user's side: sign in if asked, allow, and the code of the redirect to the callback. */
  async redirectToAuthorization(url: URL): Promise<void> {
    this.log.authorizations.push(url);
    this.caught = this.authorizeInPage(url);
    await this.caught;
  }

  /** The code the last authorization redirected with. */
  async code(): Promise<string> {
    if (!this.caught) throw new Error('the SDK never sent the user to authorize');
    return this.caught;
  }

  private async authorizeInPage(url: URL): Promise<string> {
    const page = this.page;
    let callback: URL | undefined;
    await page.route(`${MCP_REDIRECT_URI}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'You may close this page.' });
    });
    try {
      await page.goto(url.toString());
      if (new URL(page.url()).pathname === '/login') {
        await page.fill('#login', this.user.login);
        await page.fill('#password', this.user.password);
        await page.click('button[type=submit]');
        await page.waitForURL((at) => at.pathname !== '/login');
      }
      // A grant the user gave before is not asked again: the redirect came at once.
      if (!callback) {
        this.log.consentPages.push(await page.innerText('body'));
        await page.click('#allow');
        await page.waitForURL((at) => at.href.startsWith(MCP_REDIRECT_URI));
      }
    } finally {
      await page.unroute(`${MCP_REDIRECT_URI}**`);
    }
    const error = callback?.searchParams.get('error');
    const code = callback?.searchParams.get('code');
    if (!code) throw new Error(`no code at the redirect URI: ${error ?? page.url()}`);
    return code;
  }
}

/**
 * Connects the SDK's client as its OAuth example does: the first connect meets the 401, the SDK
 * discovers and sends the user to authorize, `finishAuth` exchanges the code, and a second
 * transport connects with the token.
 */
export async function connectWithOAuth(mcpUrl: URL, provider: ChromiumOAuthProvider): Promise<Client> {
  // The SDK's own requests, seen as they go (the transport hands its fetch to discovery and token calls too).
  const recorded: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    provider.log.exchanges.push({
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      authorized: request.headers.has('authorization'),
    });
    return response;
  };
  const options = { authProvider: provider, fetch: recorded };
  const first = new Client({ name: 'sdk-oauth-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl, options);
  try {
    await first.connect(transport);
    return first; // the provider held a valid token already
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  await transport.finishAuth(await provider.code());
  const client = new Client({ name: 'sdk-oauth-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, options));
  return client;
}
