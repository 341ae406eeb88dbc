// The peer for loads 1 and 3: panva/oidc-provider with its in-memory adapter, one confidential
// client (client_secret_basic) and refresh-token rotation on every use. It mints what the loads
// need through its own models (a grant per chain, a refresh token per chain, one access token for
// user info) and prints them as one JSON line on stdout, then serves until killed.
//
//   sh scripts/node.sh bench/peer.ts PORT CHAINS
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.argv[2] ?? 4100);
const chains = Number(process.argv[3] ?? 32);
const issuer = `http://127.0.0.1:${port}`;
const client = {
  client_id: 'bench-client',
  client_secret: 'bench-secret-0123456789abcdef0123456789abcdef',
  redirect_uris: ['http://127.0.0.1:9/callback'],
};

// Its own signing key, so the provider does not fall back to its development keys.
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: 'bench', alg: 'ES256', use: 'sig' };

const provider = new Provider(issuer, {
  clients: [
    {
      ...client,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: ['bench-cookie-key-0123456789'] },
  features: { devInteractions: { enabled: false } },
  rotateRefreshToken: true,
  // Like ours: opaque access tokens, two hours; refresh tokens thirty days.
  ttl: { AccessToken: 7200, RefreshToken: 30 * 24 * 3600, Grant: 30 * 24 * 3600 },
  findAccount: (_ctx: unknown, sub: string) => ({
    accountId: sub,
    claims: () => ({ sub, name: 'Bench User', preferred_username: 'bench', picture: null }),
  }),
  claims: { openid: ['sub'], profile: ['name', 'preferred_username', 'picture'] },
});

type Token = { save(): Promise<string> };
type Models = {
  Grant: new (init: { accountId: string; clientId: string }) => Token & { addOIDCScope(scope: string): void };
  Client: { find(id: string): Promise<unknown> };
  RefreshToken: new (init: Record<string, unknown>) => Token;
  AccessToken: new (init: Record<string, unknown>) => Token;
};
const models = provider as unknown as Models;
const oidcClient = await models.Client.find(client.client_id);

async function grant(scope: string): Promise<string> {
  const g = new models.Grant({ accountId: 'user-1', clientId: client.client_id });
  g.addOIDCScope(scope);
  return g.save();
}

// Refresh chains: scope offline_access only, so a refresh returns what ours returns (an access and
// a refresh token, no ID token).
const refreshTokens: string[] = [];
for (let i = 0; i < chains; i += 1) {
  const grantId = await grant('offline_access');
  const rt = new models.RefreshToken({
    accountId: 'user-1',
    client: oidcClient,
    grantId,
    scope: 'offline_access',
    gty: 'authorization_code',
  });
  refreshTokens.push(await rt.save());
}
const userinfoGrant = await grant('openid profile');
const accessToken = await new models.AccessToken({
  accountId: 'user-1',
  client: oidcClient,
  grantId: userinfoGrant,
  scope: 'openid profile',
  gty: 'authorization_code',
}).save();

const server = provider.listen(port, '127.0.0.1');
server.keepAliveTimeout = 65_000;
server.on('listening', () => {
  console.log(
    JSON.stringify({
      issuer,
      tokenUrl: `${issuer}/token`,
      userinfoUrl: `${issuer}/me`,
      clientId: client.client_id,
      clientSecret: client.client_secret,
      refreshTokens,
      accessToken,
    }),
  );
});
process.on('SIGTERM', () => process.exit(0));
