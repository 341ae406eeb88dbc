// A command-line client that signs its user in with the device authorization grant (RFC 8628):
// it asks the service for a device code, tells the user where to enter the user code, polls the
// token endpoint at the interval the service gives (longer after each slow_down), and then reads
// with the access token what the user granted: who they are, their access tokens and their workflows.
//
//   BASE_URL=http://localhost:3000 CLIENT_ID=app_... CLIENT_SECRET=cs_... node examples/device-cli/cli.ts
import { createApiClient, formBody, type components } from 'openauth-workflows/client';

type OAuthError = components['schemas']['OAuthError'];
type TokenResponse = components['schemas']['TokenResponse'];

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

function setting(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set (see examples/device-cli/README.md)`);
    process.exit(2);
  }
  return value;
}

const baseUrl = setting('BASE_URL').replace(/\/+$/, '');
const clientId = setting('CLIENT_ID');
const clientSecret = setting('CLIENT_SECRET');
const scope = process.env.SCOPE ?? 'user_info api_key workflows:read';
const anonymous = createApiClient(baseUrl);

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** RFC 8628 3.1-3.2: the device code, and the user code with where to enter it. */
async function startDeviceAuthorization() {
  const { data, error, response } = await anonymous.POST('/api/open/oauth/device_authorization', {
    body: { scope, client_id: clientId, client_secret: clientSecret },
    ...formBody,
  });
  if (!data) throw new Error(`device authorization refused (${response.status}): ${JSON.stringify(error)}`);
  return data;
}

/** RFC 8628 3.4-3.5: polls until the user decides or the code expires. */
async function pollForTokens(deviceCode: string, interval: number, expiresIn: number): Promise<TokenResponse> {
  const deadline = Date.now() + expiresIn * 1000;
  let wait = interval;
  while (Date.now() < deadline) {
    await sleep(wait);
    const { data, error, response } = await anonymous.POST('/api/open/oauth/token', {
      body: { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId, client_secret: clientSecret },
      ...formBody,
    });
    if (data) return data;
    const code = (error as OAuthError | undefined)?.error;
    if (code === 'authorization_pending') continue;
    // 3.5: slow down by 5 seconds, for this and every later poll; a 429 says how long in Retry-After.
    if (code === 'slow_down') {
      wait = Math.max(wait + 5, Number(response.headers.get('retry-after') ?? 0));
      continue;
    }
    if (code === 'access_denied') throw new Error('You denied the request.');
    if (code === 'expired_token') throw new Error('The code expired before it was approved; run the command again.');
    throw new Error(`token request refused (${response.status}): ${JSON.stringify(error)}`);
  }
  throw new Error('The code expired before it was approved; run the command again.');
}

const device = await startDeviceAuthorization();
console.log(`To sign in, open ${device.verification_uri} and enter the code ${device.user_code}`);
console.log(`(or open ${device.verification_uri_complete})`);
const tokens = await pollForTokens(device.device_code, device.interval, device.expires_in).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});

const api = createApiClient(baseUrl, { bearer: tokens.access_token });
const me = await api.GET('/api/open/v1/userinfo');
if (!me.data) throw new Error(`userinfo refused (${me.response.status})`);
console.log(`Signed in as ${me.data.login} (${me.data.name})`);
const list = await api.GET('/api/open/v1/{namespace}/tokens', { params: { path: { namespace: me.data.login } } });
if (!list.data) throw new Error(`listing access tokens refused (${list.response.status})`);
console.log(`Access tokens in ${me.data.login}:`);
for (const token of list.data) console.log(`- ${token.name} (id ${token.id}, ${token.usage_scenario})`);
if (list.data.length === 0) console.log('(none)');

/** Every workflow of the user, page by page (the API's pages hold at most 100). */
async function allWorkflows(): Promise<{ id: string; name: string }[]> {
  const found: { id: string; name: string }[] = [];
  for (let page = 1; ; page += 1) {
    const { data, response } = await api.GET('/api/workflows', { params: { query: { page, per_page: 100 } } });
    if (!data) throw new Error(`listing workflows refused (${response.status})`);
    found.push(...data.data);
    if (page >= data.meta.total_pages) return found;
  }
}

// The token reads workflows only if the user granted workflows:read (a narrower SCOPE may leave it out).
if (tokens.scope?.split(' ').includes('workflows:read')) {
  const workflows = await allWorkflows();
  console.log(`Workflows of ${me.data.login}:`);
  for (const workflow of workflows) console.log(`- ${workflow.name} (${workflow.id})`);
  if (workflows.length === 0) console.log('(none)');
}
