// The OAuth 2.0 client side, all of it done by oauth4webapi: discovery (RFC 8414), the
// authorization request with state and PKCE S256 (RFC 7636), the callback's checks, the code
// exchange, refresh and revocation.
import * as oauth from 'oauth4webapi';
import type { ExampleConfig } from './config.ts';

export const SCOPE = 'user_info api_key';

export interface OAuthClient {
  /** Where to send the browser to sign in, and what the callback must find again. */
  authorizationUrl(): Promise<{ url: URL; state: string; codeVerifier: string }>;
  /** Checks the callback (error, state) and exchanges the code with the PKCE verifier. */
  exchangeCode(
    callbackUrl: URL,
    expected: { state: string; codeVerifier: string },
  ): Promise<oauth.TokenEndpointResponse>;
  refresh(refreshToken: string): Promise<oauth.TokenEndpointResponse>;
  revoke(token: string): Promise<void>;
}

export function oauthClient(config: ExampleConfig): OAuthClient {
  const issuer = new URL(config.serviceUrl);
  const client: oauth.Client = { client_id: config.clientId };
  const clientAuth =
    config.clientAuth === 'client_secret_post'
      ? oauth.ClientSecretPost(config.clientSecret)
      : oauth.ClientSecretBasic(config.clientSecret);
  // A local demo talks to http://localhost; oauth4webapi refuses plain http unless told.
  const options = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};

  let discovered: Promise<oauth.AuthorizationServer> | undefined;
  const server = () => {
    discovered ??= oauth
      .discoveryRequest(issuer, { algorithm: 'oauth2', ...options })
      .then((response) => oauth.processDiscoveryResponse(issuer, response))
      .catch((err: unknown) => {
        discovered = undefined; // try again on the next request (the service may start after us)
        throw err;
      });
    return discovered;
  };

  return {
    async authorizationUrl() {
      const as = await server();
      const state = oauth.generateRandomState();
      const codeVerifier = oauth.generateRandomCodeVerifier();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: config.clientId,
        redirect_uri: config.redirectUri,
        scope: SCOPE,
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      }).toString();
      return { url, state, codeVerifier };
    },

    async exchangeCode(callbackUrl, expected) {
      const as = await server();
      // Throws AuthorizationResponseError for ?error=..., and a processing error when `state` differs.
      const params = oauth.validateAuthResponse(as, client, callbackUrl, expected.state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth,
        params,
        config.redirectUri,
        expected.codeVerifier,
        options,
      );
      return oauth.processAuthorizationCodeResponse(as, client, response);
    },

    async refresh(refreshToken) {
      const as = await server();
      const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, options);
      return oauth.processRefreshTokenResponse(as, client, response);
    },

    async revoke(token) {
      const as = await server();
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, token, options));
    },
  };
}

/** A one-line, user-facing description of an oauth4webapi error (never includes a token). */
export function describeOAuthError(err: unknown): string {
  if (err instanceof oauth.AuthorizationResponseError)
    return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
  if (err instanceof oauth.ResponseBodyError)
    return `${err.error} (HTTP ${err.status})${err.error_description ? `: ${err.error_description}` : ''}`;
  if (err instanceof Error) return err.message;
  return String(err);
}
