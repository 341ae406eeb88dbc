import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveService, type LiveService } from '../../contract-tests/liveService.ts';
import { adminCli } from '../support/processes.ts';
import { authorizeInBrowser, Browser, formFields } from '../support/oauthFlow.ts';

// Relying parties of three other languages, nobody here wrote, with their defaults, sign a user in
// to the live service (`src/main.ts` as a process, on a fresh store) and validate its ID tokens:
// Nimbus OAuth 2.0 SDK with OpenID Connect extensions (Java; its default IDTokenValidator built
// from the discovery metadata and the client's registration, which expects RS256 unless the
// registration names another algorithm), Authlib (Python; its Flask client) and go-oidc (Go;
// oidc.NewProvider + Verifier). Each runs the authorization-code flow (state, nonce, PKCE),
// checks the ID token's signature with the keys at jwks_uri, and reads userinfo; the user answers
// the real login and consent pages over HTTP. Two clients: one registered without
// id_token_signed_response_alg (RS256 ID tokens) and one registered with ES256.
// scripts/relying-parties.sh installs and builds them (Maven Central, PyPI, the Go module proxy).

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The relying parties' launchers, or why there are none (a machine without Java, Go or Python). */
function launchers(): { bin: string } | { skip: string } {
  const setup = spawnSync('sh', ['scripts/relying-parties.sh'], { cwd: root, encoding: 'utf8' });
  if (setup.status === 0) return { bin: setup.stdout.trim().split('\n').at(-1)! };
  const why = `scripts/relying-parties.sh failed (${setup.error?.message ?? `exit ${setup.status}`}):\n${setup.stderr.slice(-3000)}`;
  // CI installs every toolchain: there a failure is a failure, never a skip.
  if (process.env.CI) throw new Error(why);
  return { skip: `${why}\nthe relying-party tests are skipped` };
}

interface Result {
  library: string;
  /** The algorithm the library was told to expect (Nimbus: its default validator's; go-oidc: a registered one; null: from discovery). */
  expected_alg: string | string[] | null;
  alg: string;
  kid: string;
  iss: string;
  aud: string;
  sub: string;
  userinfo_sub: string;
}

interface Client {
  clientId: string;
  clientSecret: string;
  /** Its registration's id_token_signed_response_alg; '' for none (the default, RS256). */
  registeredAlg: '' | 'ES256';
}

const RELYING_PARTIES = ['nimbus', 'authlib', 'go-oidc'] as const;

describe('OpenID Connect relying parties of other languages, with their defaults, against the live service', () => {
  let service: LiveService;
  let bin: string | undefined;
  let skip: string | undefined;
  const clients: Record<'default' | 'es256', Client> = {} as never;

  beforeAll(async () => {
    const found = launchers();
    if ('skip' in found) {
      skip = found.skip;
      return;
    }
    bin = found.bin;
    service = await startLiveService();
    const c = service.credentials;
    clients.default = { clientId: c.CONTRACT_CLIENT_ID, clientSecret: c.CONTRACT_CLIENT_SECRET, registeredAlg: '' };
    // The operator registers a second app whose client asked for ES256 ID tokens.
    const es = adminCli(
      service.env,
      'app',
      'create',
      '--owner',
      c.CONTRACT_LOGIN,
      '--name',
      'ES256 relying party',
      '--description',
      'Asks for ES256 ID tokens',
      '--homepage',
      'http://127.0.0.1:9/',
      '--redirect-uri',
      c.CONTRACT_REDIRECT_URI,
      '--id-token-alg',
      'ES256',
    ) as { client_id: string; client_secret: string; id_token_signed_response_alg: string };
    expect(es.id_token_signed_response_alg).toBe('ES256');
    clients.es256 = { clientId: es.client_id, clientSecret: es.client_secret, registeredAlg: 'ES256' };
  }, 300_000);
  afterAll(async () => {
    await service?.stop();
  });

  /** The user's browser from the authorization URL to the callback: login, then consent (unless remembered). */
  async function userSignsIn(authorizationUrl: string): Promise<string> {
    const c = service.credentials;
    const browser = new Browser(service.baseUrl);
    const toLogin = await browser.fetch(authorizationUrl);
    expect(toLogin.status).toBe(302);
    const loginPage = await browser.fetch(toLogin.headers.get('location')!);
    expect(loginPage.status).toBe(200);
    const loggedIn = await browser.post('/login', {
      ...formFields(await loginPage.text()),
      login: c.CONTRACT_LOGIN,
      password: c.CONTRACT_PASSWORD,
    });
    expect(loggedIn.status).toBe(303);
    // The relying party's own PKCE (each sends it), not the helpers'.
    return (
      await authorizeInBrowser(browser, new URL(loggedIn.headers.get('location')!, service.baseUrl), 'allow', {
        pkce: false,
      })
    ).toString();
  }

  /** Runs one relying party's driver: it prints the authorization URL, gets the callback, prints its result. */
  function signInWith(name: string, client: Client): Promise<Result> {
    const child = spawn(path.join(bin!, name), [], {
      cwd: root,
      env: {
        ...process.env,
        OIDC_ISSUER: service.baseUrl,
        OIDC_CLIENT_ID: client.clientId,
        OIDC_CLIENT_SECRET: client.clientSecret,
        OIDC_REDIRECT_URI: service.credentials.CONTRACT_REDIRECT_URI,
        OIDC_ID_TOKEN_ALG: client.registeredAlg,
      },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    return new Promise<Result>((resolve, reject) => {
      let result: Result | undefined;
      const fail = (err: unknown) => {
        child.kill('SIGKILL');
        reject(err instanceof Error ? new Error(`${name}: ${err.message}\n${stderr}`) : err);
      };
      const timer = setTimeout(() => fail(new Error('no result within 90 s')), 90_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.startsWith('AUTHORIZE ')) {
          userSignsIn(line.slice('AUTHORIZE '.length)).then((callback) => child.stdin.end(`${callback}\n`), fail);
        } else if (line.startsWith('RESULT ')) {
          result = JSON.parse(line.slice('RESULT '.length)) as Result;
        }
      });
      child.on('error', fail);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0 && result) resolve(result);
        else
          reject(new Error(`${name} exited with ${code}${result ? '' : ' without a result'}:\n${stderr.slice(-4000)}`));
      });
    });
  }

  async function publishedKey(kid: string): Promise<Record<string, unknown> | undefined> {
    const jwks = (await (await fetch(`${service.baseUrl}/.well-known/jwks.json`)).json()) as {
      keys: Array<Record<string, unknown>>;
    };
    return jwks.keys.find((k) => k.kid === kid);
  }

  for (const name of RELYING_PARTIES) {
    it(`${name}: a client registered without id_token_signed_response_alg gets an RS256 ID token, which the library's defaults accept`, async (testContext) => {
      if (skip) {
        console.log(skip);
        testContext.skip();
        return;
      }
      const result = await signInWith(name, clients.default);
      expect(result).toMatchObject({
        alg: 'RS256',
        iss: service.baseUrl,
        aud: clients.default.clientId,
        userinfo_sub: result.sub,
      });
      // Nimbus's default validator expects RS256: what refused the provider while it published ES256 alone.
      if (name === 'nimbus') expect(result.expected_alg).toBe('RS256');
      expect(await publishedKey(result.kid)).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    }, 120_000);

    it(`${name}: a client registered with id_token_signed_response_alg ES256 gets an ES256 ID token, which the library accepts`, async (testContext) => {
      if (skip) {
        console.log(skip);
        testContext.skip();
        return;
      }
      const result = await signInWith(name, clients.es256);
      expect(result).toMatchObject({
        alg: 'ES256',
        iss: service.baseUrl,
        aud: clients.es256.clientId,
        userinfo_sub: result.sub,
      });
      expect(await publishedKey(result.kid)).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    }, 120_000);
  }
});
