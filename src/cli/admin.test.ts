import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { hashToken } from '../shared/crypto.ts';
import { createUser } from '../accounts/users.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';
import { Browser, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer } from '../../test/support/server.ts';
import { TEST_PASSWORD_HASH_COST } from '../../test/support/passwordCost.ts';

const exec = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

// Each CLI call is a process starting Node and loading the service: seconds apiece on a loaded
// machine, so a test making several outlived vitest's 30 s default there, whatever it checked.
describe.each(testDialects())('admin CLI on %s', { timeout: 120_000 }, (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function admin(...args: string[]): Promise<CliResult> {
    return adminWith({ DATABASE_URL: t.url }, ...args);
  }

  function adminIn(nodeEnv: string, ...args: string[]): Promise<CliResult> {
    return adminWith({ DATABASE_URL: t.url, NODE_ENV: nodeEnv }, ...args);
  }

  async function adminWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
    try {
      // Not process.env: vitest puts Vite's BASE_URL=/ (and MODE, DEV ...) there.
      const childEnv: Record<string, string | undefined> = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'test',
        SECRETS_KEY: TEST_SECRETS_KEY,
        ...env,
      };
      // Cheap password hashes, as in this process (production refuses a cost below 17).
      if (childEnv.NODE_ENV !== 'production') childEnv.PASSWORD_HASH_COST ??= String(TEST_PASSWORD_HASH_COST);
      const { stdout, stderr } = await exec('sh', ['scripts/node.sh', 'src/cli/admin.ts', ...args], { env: childEnv });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  async function adminJson(...args: string[]): Promise<Record<string, unknown>> {
    const result = await admin(...args, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  }

  it('creates a user, an org, an app and a token, each printing one JSON object', async () => {
    const user = await adminJson(
      'user',
      'create',
      '--login',
      'cli-user',
      '--password',
      'cli-password',
      '--name',
      'CLI User',
    );
    expect(user).toMatchObject({ id: expect.any(Number), login: 'cli-user', name: 'CLI User' });

    const org = await adminJson('org', 'create', '--namespace', 'cli-org', '--name', 'CLI Org', '--owner', 'cli-user');
    expect(org).toMatchObject({ id: expect.any(Number), namespace: 'cli-org' });

    const app = await adminJson(
      'app',
      'create',
      '--owner',
      'cli-user',
      '--name',
      'CLI App',
      '--description',
      'From the CLI',
      '--homepage',
      'https://cli.example',
      '--redirect-uri',
      'https://cli.example/callback',
    );
    expect(app).toMatchObject({
      client_id: expect.stringMatching(/^app_/),
      client_secret: expect.stringMatching(/^cs_/),
    });

    const token = await adminJson(
      'token',
      'create',
      '--user',
      'cli-user',
      '--namespace',
      'cli-org',
      '--name',
      'ci',
      '--usage-scenario',
      'paid',
      '--permission',
      'workflows',
    );
    expect(token).toMatchObject({
      id: expect.any(Number),
      token: expect.stringMatching(/^sk_/),
      permissions: ['workflows'],
    });

    // What the CLI printed once is stored only as hashes.
    const appRow = await t.db('applications').where({ client_id: app.client_id }).first();
    expect(await t.db('client_secrets').where({ application_id: appRow.id }).pluck('secret_hash')).toEqual([
      hashToken(app.client_secret as string),
    ]);
    const tokenRow = await t.db('access_tokens').where({ id: token.id }).first();
    expect(tokenRow.token_hash).toBe(hashToken(token.token as string));

    const list = await adminJson('token', 'list', '--user', 'cli-user', '--namespace', 'cli-org');
    expect(list).toEqual({ data: [{ id: token.id, name: 'ci', usage_scenario: 'paid' }] });
  });

  it('seeds the demo data on request (never in production) and prints its secrets once', async () => {
    const refused = await adminIn('production', 'demo', 'seed', '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({
      error: { code: 'demo_in_production', message: expect.stringMatching(/never created in production/) },
    });
    expect(await t.db('users').where({ login: 'demo' }).first('id')).toBeUndefined();

    const demo = await adminJson('demo', 'seed');
    expect(demo).toMatchObject({
      login: 'demo',
      password: 'horse-battery-staple',
      client_secret: expect.stringMatching(/^cs_/),
      api_key: expect.stringMatching(/^sk_/),
    });
    expect(
      (
        await t
          .db('access_tokens')
          .where({ token_hash: hashToken(demo.api_key as string) })
          .first()
      ).name,
    ).toBe('Demo API key');
    const again = await admin('demo', 'seed', '--json');
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error.message).toMatch(/exists already/);
  });

  it('sets a password (ending the sessions) and deletes a user', async () => {
    await adminJson('user', 'create', '--login', 'cli-temp', '--password', 'cli-password', '--name', 'Temp');
    expect(
      await adminJson('user', 'set-password', '--login', 'cli-temp', '--password', 'new-cli-password'),
    ).toMatchObject({ login: 'cli-temp', sessions_ended: 0 });
    // The password policy (OWASP ASVS V2.1) holds for the operator too: refused with the reason.
    const weak = await admin(
      'user',
      'create',
      '--login',
      'cli-weak',
      '--password',
      '12345678',
      '--name',
      'Weak',
      '--json',
    );
    expect(weak.code).toBe(1);
    expect(JSON.parse(weak.stdout)).toEqual({
      error: {
        code: 'invalid_field',
        message: 'The password must be at least 12 characters (a few words make a good one).',
      },
    });
    const breached = await admin('user', 'set-password', '--login', 'cli-temp', '--password', 'qwerty123456', '--json');
    expect(JSON.parse(breached.stdout).error.message).toBe(
      'The password is one of the most common passwords, found in data breaches: choose another.',
    );
    expect(
      JSON.parse(
        (await admin('user', 'set-password', '--login', 'cli-temp', '--password', 'cli-temp is me', '--json')).stdout,
      ).error.message,
    ).toBe('The password must not contain your login.');
    expect(await adminJson('user', 'delete', '--login', 'cli-temp')).toMatchObject({
      login: 'cli-temp',
      deleted: true,
    });
    const gone = await admin('user', 'delete', '--login', 'cli-temp', '--json');
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout).error.message).toMatch(/No user with login "cli-temp"/);
  });

  it('adds a member to an org', async () => {
    await adminJson('user', 'create', '--login', 'cli-member', '--password', 'cli-password', '--name', 'Member');
    expect(await adminJson('org', 'add-member', '--namespace', 'cli-org', '--login', 'cli-member')).toMatchObject({
      role: 'member',
    });
  });

  it('exits 1 with a message on stderr when the service refuses (duplicate login); with --json, one JSON error object on stdout', async () => {
    const args = ['user', 'create', '--login', 'cli-user', '--password', 'cli-password', '--name', 'Again'];
    const human = await admin(...args);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/already taken/);
    const json = await admin(...args, '--json');
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toEqual({
      error: { code: 'name_taken', message: expect.stringMatching(/already taken/) },
    });
  });

  it('exits 2 on bad usage: missing options, unknown command or option', async () => {
    for (const args of [
      ['user', 'create', '--login', 'x'],
      ['user', 'explode'],
      ['user', 'create', '--bogus'],
    ]) {
      const result = await admin(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--help/);
    }
    const json = await admin('user', 'create', '--bogus', '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'usage', message: expect.any(String) } });
  });

  it('names an unknown option and the options the command takes; an option of another command is called that', async () => {
    const unknown = await admin('user', 'create', '--logn', 'x');
    expect(unknown.stderr).toContain(
      'unknown option --logn (user create takes --login, --password, --name, --avatar-url)',
    );
    const foreign = await admin('user', 'create', '--owner', 'x');
    expect(foreign.stderr).toContain('option --owner does not apply to user create');
  });

  it("shows a group's help for a bare group (`admin user`: exit 2) and for `admin user --help` (exit 0)", async () => {
    const bare = await admin('user');
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/user create --login LOGIN/);
    expect(bare.stderr).toMatch(/user delete --login LOGIN/);
    expect(bare.stderr).not.toMatch(/org create/);
    const help = await admin('user', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/user delete --login LOGIN/);
  });

  it('refuses a DATA_DIR with no database instead of creating an empty one there', async () => {
    const dataDir = path.join(tmpdir(), `no-db-${process.pid}-${Date.now()}`);
    const result = await adminWith({ DATA_DIR: dataDir }, 'token', 'list', '--user', 'demo', '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: { code: 'no_database', message: expect.stringContaining('start the service once (npm start)') },
    });
    expect(existsSync(dataDir)).toBe(false);
  });

  it('updates an app by client_id, keeping its secret; refuses an update with nothing to change', async () => {
    await adminJson('user', 'create', '--login', 'cli-owner', '--password', 'cli-password', '--name', 'Owner');
    const app = await adminJson(
      'app',
      'create',
      '--owner',
      'cli-owner',
      '--name',
      'Before',
      '--description',
      'd',
      '--homepage',
      'https://a.example',
      '--redirect-uri',
      'https://a.example/cb',
    );
    const updated = await adminJson(
      'app',
      'update',
      '--client-id',
      String(app.client_id),
      '--name',
      'After',
      '--redirect-uri',
      'https://b.example/cb',
    );
    expect(updated).toMatchObject({
      client_id: app.client_id,
      name: 'After',
      description: 'd',
      redirect_uri: 'https://b.example/cb',
    });
    const row = await t.db('applications').where({ client_id: app.client_id }).first();
    expect(row).toMatchObject({ name: 'After', redirect_uri: 'https://b.example/cb' });
    expect(await t.db('client_secrets').where({ application_id: row.id }).pluck('secret_hash')).toEqual([
      hashToken(app.client_secret as string),
    ]);
    expect((await admin('app', 'update', '--client-id', String(app.client_id))).code).toBe(2);
    expect((await admin('app', 'update', '--client-id', 'app_nope', '--name', 'x')).code).toBe(1);
  });

  it("sets an app's ID token algorithm (id_token_signed_response_alg): RS256 unless --id-token-alg says ES256, shown by --json, changed by app update", async () => {
    await adminJson('user', 'create', '--login', 'cli-oidc', '--password', 'cli-password', '--name', 'OIDC');
    const create = (name: string, ...more: string[]) =>
      adminJson(
        'app',
        'create',
        '--owner',
        'cli-oidc',
        '--name',
        name,
        '--description',
        'd',
        '--homepage',
        'https://o.example',
        '--redirect-uri',
        'https://o.example/cb',
        ...more,
      );
    const plain = await create('Default');
    expect(plain).toMatchObject({ client_id: expect.any(String), id_token_signed_response_alg: 'RS256' });
    const es = await create('Elliptic', '--id-token-alg', 'ES256');
    expect(es).toMatchObject({ id_token_signed_response_alg: 'ES256' });
    expect(await t.db('applications').where({ client_id: es.client_id }).first()).toMatchObject({
      id_token_signed_response_alg: 'ES256',
    });

    // Any case as typed; stored in its registered spelling.
    expect(
      await adminJson('app', 'update', '--client-id', String(es.client_id), '--id-token-alg', 'rs256'),
    ).toMatchObject({ name: 'Elliptic', id_token_signed_response_alg: 'RS256' });
    expect(
      await adminJson('app', 'update', '--client-id', String(plain.client_id), '--id-token-alg', 'ES256'),
    ).toMatchObject({ id_token_signed_response_alg: 'ES256' });
    expect(await t.db('applications').where({ client_id: plain.client_id }).first()).toMatchObject({
      id_token_signed_response_alg: 'ES256',
    });

    const refused = await admin(
      'app',
      'update',
      '--client-id',
      String(plain.client_id),
      '--id-token-alg',
      'HS256',
      '--json',
    );
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({
      error: { code: 'invalid_field', message: 'id_token_signed_response_alg must be RS256 or ES256 (got "HS256").' },
    });
    expect((await admin('app', '--help')).stdout).toMatch(/app create .*\[--id-token-alg RS256\|ES256\]/);
  });

  it('requires PKCE of an app unless the operator opts it out (--pkce optional), and back (--pkce required)', async () => {
    await adminJson('user', 'create', '--login', 'cli-pkce', '--password', 'pkce-owner-passphrase', '--name', 'PKCE');
    const app = await adminJson(
      'app',
      'create',
      '--owner',
      'cli-pkce',
      '--name',
      'Legacy RP',
      '--description',
      'd',
      '--homepage',
      'https://p.example',
      '--redirect-uri',
      'https://p.example/cb',
    );
    expect(app).toMatchObject({ pkce_required: true });
    expect(await adminJson('app', 'update', '--client-id', String(app.client_id), '--pkce', 'optional')).toMatchObject({
      name: 'Legacy RP',
      pkce_required: false,
    });
    expect(Boolean((await t.db('applications').where({ client_id: app.client_id }).first()).pkce_required)).toBe(false);
    expect(await adminJson('app', 'update', '--client-id', String(app.client_id), '--pkce', 'required')).toMatchObject({
      pkce_required: true,
    });
    expect(Boolean((await t.db('applications').where({ client_id: app.client_id }).first()).pkce_required)).toBe(true);
    const bad = await admin('app', 'update', '--client-id', String(app.client_id), '--pkce', 'maybe');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--pkce is required or optional');
  });

  it("lists a user's access tokens across namespaces and revokes one by id", async () => {
    await adminJson('user', 'create', '--login', 'cli-keys', '--password', 'cli-password', '--name', 'Keys');
    const token = await adminJson(
      'token',
      'create',
      '--user',
      'cli-keys',
      '--namespace',
      'cli-keys',
      '--name',
      'k',
      '--usage-scenario',
      'trial',
    );
    const list = await adminJson('token', 'list', '--user', 'cli-keys');
    expect(list).toEqual({
      data: [expect.objectContaining({ id: token.id, namespace: 'cli-keys', name: 'k', last_used_at: null })],
    });
    expect(JSON.stringify(list)).not.toContain(token.token as string);
    expect(await adminJson('token', 'revoke', '--user', 'cli-keys', '--id', String(token.id))).toEqual({
      revoked: true,
      id: token.id,
    });
    expect(await t.db('access_tokens').where({ id: token.id }).first()).toBeUndefined();
    expect((await admin('token', 'revoke', '--user', 'cli-keys', '--id', String(token.id))).code).toBe(1);
  });

  it('creates a token that expires, in days (--expires-in) or at a moment (--expires-at); a bad value is refused naming its flag', async () => {
    await adminJson('user', 'create', '--login', 'cli-expiry', '--password', 'cli-password', '--name', 'Expiry');
    const base = ['token', 'create', '--user', 'cli-expiry', '--namespace', 'cli-expiry', '--usage-scenario', 'paid'];
    const before = Date.now();
    const inDays = await adminJson(...base, '--name', 'thirty', '--expires-in', '30d');
    const expiresAt = Date.parse(inDays.expires_at as string);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
    const day = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    const atDay = await adminJson(...base, '--name', 'dated', '--expires-at', day);
    expect(atDay.expires_at).toBe(`${day}T00:00:00.000Z`);
    const atTime = await adminJson(...base, '--name', 'timed', '--expires-at', `${day}T18:30:00+02:00`);
    expect(atTime.expires_at).toBe(`${day}T16:30:00.000Z`);
    const never = await adminJson(...base, '--name', 'forever');
    expect(never.expires_at).toBeNull();
    expect(Number((await t.db('access_tokens').where({ id: atDay.id }).first()).expires_at)).toBe(
      Date.parse(`${day}T00:00:00Z`),
    );
    const list = await adminJson('token', 'list', '--user', 'cli-expiry');
    expect(
      (list.data as Array<{ name: string; expires_at: string | null }>).map((x) => [x.name, x.expires_at]).sort(),
    ).toEqual(
      [
        ['dated', `${day}T00:00:00.000Z`],
        ['forever', null],
        ['thirty', inDays.expires_at],
        ['timed', `${day}T16:30:00.000Z`],
      ].sort(),
    );

    const refusals: Array<[string[], RegExp]> = [
      [['--expires-in', '0'], /--expires-in must be a whole number of days from 1 to 366, as 30 or 30d \(got "0"\)/],
      [['--expires-in', '367'], /--expires-in must be a whole number of days from 1 to 366/],
      [['--expires-in', 'soon'], /--expires-in must be a whole number of days/],
      [['--expires-at', 'tomorrow'], /--expires-at must be a date \(2027-01-31, UTC\) or a date-time with its offset/],
      [['--expires-at', `${day}T18:30:00`], /--expires-at must be a date .* with its offset/],
      [['--expires-at', '2020-01-01'], /--expires-at must be in the future \(got "2020-01-01"\)/],
      [['--expires-at', '2999-01-01'], /--expires-at must be at most 366 days from now/],
      [['--expires-in', '30', '--expires-at', day], /give --expires-in or --expires-at, not both/],
      [['--expires-in'], /option --expires-in needs a value/],
    ];
    for (const [flags, message] of refusals) {
      const refused = await admin(...base, '--name', 'refused', ...flags);
      expect(refused.code, flags.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(message);
    }
    expect(await t.db('access_tokens').where({ name: 'refused' }).first()).toBeUndefined();
    // Flags are checked before the database is opened: with none reachable, the usage error still comes first.
    const noDatabase = await adminWith(
      { DATABASE_URL: 'mysql://app:app@127.0.0.1:1/nowhere' },
      ...base,
      '--name',
      'refused',
      '--expires-in',
      '0',
    );
    expect(noDatabase.code).toBe(2);
    expect(noDatabase.stderr).toMatch(/--expires-in must be a whole number of days/);
    expect((await admin('--help')).stdout).toMatch(/\[--expires-in DAYS \| --expires-at DATE\]/);
  }, 120_000); // many CLI processes, each starting Node

  it('generates a second client secret for a rotation, lists the secrets, deletes one; the last only with --even-the-last', async () => {
    await adminJson('user', 'create', '--login', 'cli-rotate', '--password', 'cli-password', '--name', 'Rotate');
    const app = await adminJson(
      'app',
      'create',
      '--owner',
      'cli-rotate',
      '--name',
      'Rotating',
      '--description',
      'd',
      '--homepage',
      'https://r.example',
      '--redirect-uri',
      'https://r.example/cb',
    );
    const clientId = String(app.client_id);
    const [first] = (await adminJson('app', 'list-secrets', '--client-id', clientId)).data as Array<{ id: number }>;

    const second = await adminJson('app', 'generate-secret', '--client-id', clientId);
    expect(second).toEqual({
      client_id: clientId,
      id: expect.any(Number),
      client_secret: expect.stringMatching(/^cs_/),
      secrets: 2,
    });
    const appRow = await t.db('applications').where({ client_id: clientId }).first();
    expect(
      await t.db('client_secrets').where({ application_id: appRow.id }).orderBy('id').pluck('secret_hash'),
    ).toEqual([hashToken(app.client_secret as string), hashToken(second.client_secret as string)]);
    const listed = await adminJson('app', 'list-secrets', '--client-id', clientId);
    expect(listed).toEqual({
      data: [
        { id: first!.id, created_at: expect.any(String), last_used_at: null },
        { id: second.id, created_at: expect.any(String), last_used_at: null },
      ],
    });
    expect(JSON.stringify(listed)).not.toContain(second.client_secret as string);

    // Two at most; a third waits for a deletion.
    const third = await admin('app', 'generate-secret', '--client-id', clientId, '--json');
    expect(third.code).toBe(1);
    expect(JSON.parse(third.stdout).error).toEqual({
      code: 'too_many_client_secrets',
      message: expect.stringMatching(/already has 2 client secrets/),
    });

    expect(await adminJson('app', 'delete-secret', '--client-id', clientId, '--id', String(first!.id))).toEqual({
      deleted: true,
      client_id: clientId,
      id: first!.id,
      secrets_left: 1,
    });
    expect(await t.db('client_secrets').where({ application_id: appRow.id }).pluck('secret_hash')).toEqual([
      hashToken(second.client_secret as string),
    ]);

    // The last one asks for --even-the-last; a secret that is gone, another app's or a malformed id is refused.
    const last = await admin('app', 'delete-secret', '--client-id', clientId, '--id', String(second.id));
    expect(last.code).toBe(1);
    expect(last.stderr).toMatch(/only client secret of Rotating.*give --even-the-last to delete it anyway/);
    const gone = await admin('app', 'delete-secret', '--client-id', clientId, '--id', String(first!.id), '--json');
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout).error.code).toBe('client_secret_not_found');
    const malformed = await admin('app', 'delete-secret', '--client-id', clientId, '--id', 'cs_abc');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/--id must be the client secret's numeric id \(got "cs_abc"\)/);
    expect((await admin('app', 'generate-secret', '--client-id', 'app_nope')).code).toBe(1);
    expect(
      await adminJson('app', 'delete-secret', '--client-id', clientId, '--id', String(second.id), '--even-the-last'),
    ).toMatchObject({ deleted: true, secrets_left: 0 });
    expect(await t.db('client_secrets').where({ application_id: appRow.id }).first()).toBeUndefined();
    expect((await admin('app', '--help')).stdout).toMatch(
      /app delete-secret --client-id ID --id SECRET_ID \[--even-the-last\]/,
    );
  }, 120_000);

  it("lists a user's browser sessions and revokes one by id, or all: the cookie stops working at once", async () => {
    const server = await startTestServer({ dialect, databaseUrl: t.url });
    try {
      await createUser(server.ctx, { login: 'cli-sess', password: 'cli-password' });
      const browsers = [new Browser(server.baseUrl), new Browser(server.baseUrl)];
      for (const b of browsers) expect((await logIn(b, 'cli-sess', 'cli-password')).status).toBe(303);
      const sessionIdOf = (b: Browser) => {
        const payload = b.cookies.get('oa_session')!.split('.')[0]!;
        return hashToken((JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sid: string }).sid).slice(
          0,
          16,
        );
      };
      const settings = async (b: Browser) => (await b.fetch('/settings/applications')).status;
      expect(await settings(browsers[0]!)).toBe(200);

      const list = await adminJson('session', 'list', '--user', 'cli-sess');
      expect(list).toEqual({
        data: expect.arrayContaining(
          browsers.map((b) => ({ id: sessionIdOf(b), created_at: expect.any(String), expires_at: expect.any(String) })),
        ),
      });
      expect((list.data as unknown[]).length).toBe(2);
      for (const b of browsers) expect(JSON.stringify(list)).not.toContain(b.cookies.get('oa_session')!.split('.')[1]);

      // One session: its browser is signed out at once, the other stays.
      const first = sessionIdOf(browsers[0]!);
      expect(await adminJson('session', 'revoke', '--user', 'cli-sess', '--id', first)).toEqual({
        revoked: 1,
        user: 'cli-sess',
        id: first,
      });
      expect(await settings(browsers[0]!)).not.toBe(200);
      expect(await settings(browsers[1]!)).toBe(200);

      // Clear errors: a session that is gone, a malformed id, neither or both of --id and --all, an unknown user.
      const gone = await admin('session', 'revoke', '--user', 'cli-sess', '--id', first, '--json');
      expect(gone.code).toBe(1);
      expect(JSON.parse(gone.stdout)).toEqual({
        error: {
          code: 'session_not_found',
          message: expect.stringMatching(new RegExp(`No session ${first} of user "cli-sess"`)),
        },
      });
      const malformed = await admin('session', 'revoke', '--user', 'cli-sess', '--id', 'oa_session');
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toMatch(/--id must be a session id from session list/);
      const neither = await admin('session', 'revoke', '--user', 'cli-sess');
      expect(neither.code).toBe(2);
      expect(neither.stderr).toMatch(/either --id ID \(from session list\) or --all/);
      const nobody = await admin('session', 'list', '--user', 'nobody-here', '--json');
      expect(nobody.code).toBe(1);
      expect(JSON.parse(nobody.stdout)).toEqual({
        error: { code: 'user_not_found', message: 'No user with login "nobody-here".' },
      });

      // All of them.
      expect(await adminJson('session', 'revoke', '--user', 'cli-sess', '--all')).toEqual({
        revoked: 1,
        user: 'cli-sess',
      });
      expect(await settings(browsers[1]!)).not.toBe(200);
      expect((await admin('session', 'list', '--user', 'cli-sess')).stdout).toBe('data:\n');
    } finally {
      await server.close();
    }
  }, 120_000); // eight CLI processes, each starting Node

  it('deletes a user with everything theirs, but not the last owner of an organization', async () => {
    await adminJson('user', 'create', '--login', 'cli-gone', '--password', 'cli-password', '--name', 'Gone');
    await adminJson(
      'app',
      'create',
      '--owner',
      'cli-gone',
      '--name',
      'G',
      '--description',
      'd',
      '--homepage',
      'https://g.example',
      '--redirect-uri',
      'https://g.example/cb',
    );
    await adminJson('org', 'create', '--namespace', 'cli-gone-org', '--name', 'Gone Org', '--owner', 'cli-gone');
    const refused = await admin('user', 'delete', '--login', 'cli-gone');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/last owner of "cli-gone-org"/);
    await adminJson('org', 'add-member', '--namespace', 'cli-gone-org', '--login', 'cli-user', '--role', 'owner');
    expect(await adminJson('user', 'delete', '--login', 'cli-gone')).toMatchObject({
      deleted: true,
      login: 'cli-gone',
    });
    expect(await t.db('users').where({ login: 'cli-gone' }).first()).toBeUndefined();
    expect(await t.db('namespaces').where({ name: 'cli-gone' }).first()).toBeUndefined();
    expect(await t.db('applications').where({ name: 'G' }).first()).toBeUndefined();
    expect((await admin('user', 'delete', '--login', 'cli-gone')).code).toBe(1);
  });

  it('prints usage with --help', async () => {
    const result = await admin('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/token create --user LOGIN --namespace NS/);
  });

  it('reports migrations as already applied', async () => {
    expect(await adminJson('migrate')).toEqual({ applied: [] });
  });
});
