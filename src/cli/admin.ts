// The admin CLI: `npm run -s admin -- COMMAND [options]`. Uses the same services as the HTTP API,
// on the database the service itself would use (DATABASE_URL, else the embedded PostgreSQL).
import { parseArgs } from 'node:util';
import type { Knex } from 'knex';
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../db/connect.ts';
import { migrateLatest, migrateRollback } from '../db/migrate.ts';
import { sealAllSecrets } from '../db/sealedSecrets.ts';
import { rotateSigningKey } from '../open/signingKeys.ts';
import { createAccessToken, listAccessTokens } from '../platform/accessTokens.ts';
import { createApp } from '../platform/apps.ts';
import { addMember, createOrg } from '../platform/orgs.ts';
import { createUser, findUserByLogin } from '../platform/users.ts';
import { Problem, userNotFound } from '../shared/errors.ts';
import { SealingError, type Sealer } from '../shared/sealing.ts';

const USAGE = `Usage: npm run -s admin -- COMMAND [options] [--json]

Commands:
  user create --login LOGIN --password PASSWORD --name NAME [--avatar-url URL]
  org create --namespace NS --name NAME --owner LOGIN
  org add-member --namespace NS --login LOGIN [--role member|owner]
  app create --owner LOGIN --name NAME --description TEXT --homepage URL --redirect-uri URL
  token create --user LOGIN --namespace NS --name NAME --usage-scenario paid|trial [--permission workflows]...
  token list --user LOGIN --namespace NS
  keys rotate             retire the proxy-token signing key (still published and verifying
                          until its tokens expire) and create a new current key
  secrets reseal          seal every stored secret with SECRETS_KEY (after a key-encryption key
                          rotation: the old key in SECRETS_KEY_PREVIOUS until this has run)
  migrate                 apply pending migrations
  migrate rollback [--all] roll back the last batch (or every migration)

Options:
  --json   print exactly one JSON object on stdout
  --help   print this help

Connects to DATABASE_URL, or to the embedded PostgreSQL under DATA_DIR when it is unset,
and applies pending migrations first. Exit status: 0 done, 1 refused or failed, 2 bad usage.`;

/** Wrong command line: printed with a pointer to --help, exit status 2. */
class UsageError extends Error {}

const options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  all: { type: 'boolean' },
  login: { type: 'string' },
  password: { type: 'string' },
  name: { type: 'string' },
  'avatar-url': { type: 'string' },
  namespace: { type: 'string' },
  owner: { type: 'string' },
  role: { type: 'string' },
  description: { type: 'string' },
  homepage: { type: 'string' },
  'redirect-uri': { type: 'string' },
  user: { type: 'string' },
  'usage-scenario': { type: 'string' },
  permission: { type: 'string', multiple: true },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values'];
type Output = Record<string, unknown>;

function required(values: Values, ...names: Array<keyof Values>): void {
  const missing = names.filter((n) => values[n] === undefined);
  if (missing.length) throw new UsageError(`missing ${missing.map((n) => `--${String(n)}`).join(', ')}`);
}

async function userIdOf(db: Knex, login: string): Promise<number> {
  const user = await findUserByLogin(db, login);
  if (!user) throw userNotFound(login);
  return user.id;
}

/** Each command: the options it needs and what it does. */
const commands: Record<string, { needs: Array<keyof Values>; run: (db: Knex, v: Values, sealer: Sealer) => Promise<Output> }> = {
  'user create': {
    needs: ['login', 'password', 'name'],
    run: async (db, v) => {
      const user = await createUser(db, { login: v.login!, password: v.password!, name: v.name!, ...(v['avatar-url'] ? { avatarUrl: v['avatar-url'] } : {}) });
      return { id: user.id, login: user.login, name: user.name, avatar_url: user.avatar_url };
    },
  },
  'org create': {
    needs: ['namespace', 'name', 'owner'],
    run: async (db, v) => {
      const org = await createOrg(db, { namespace: v.namespace!, name: v.name!, ownerLogin: v.owner! });
      return { id: org.id, namespace: org.namespace, name: org.name, owner: v.owner!.toLowerCase() };
    },
  },
  'org add-member': {
    needs: ['namespace', 'login'],
    run: async (db, v) => {
      const m = await addMember(db, v.namespace!, v.login!, v.role ?? 'member');
      return { org_id: m.org_id, user_id: m.user_id, namespace: v.namespace!.toLowerCase(), login: v.login!.toLowerCase(), role: m.role };
    },
  },
  'app create': {
    needs: ['owner', 'name', 'description', 'homepage', 'redirect-uri'],
    run: async (db, v) => {
      const { app, clientSecret } = await createApp(db, {
        ownerLogin: v.owner!,
        name: v.name!,
        description: v.description!,
        homepage: v.homepage!,
        redirectUri: v['redirect-uri']!,
      });
      return { id: app.id, client_id: app.client_id, client_secret: clientSecret, name: app.name, redirect_uri: app.redirect_uri };
    },
  },
  'token create': {
    needs: ['user', 'namespace', 'name', 'usage-scenario'],
    run: async (db, v) => {
      const { token, record } = await createAccessToken(db, {
        userLogin: v.user!,
        namespace: v.namespace!,
        name: v.name!,
        usageScenario: v['usage-scenario']!,
        permissions: v.permission ?? [],
      });
      return {
        id: record.id,
        token,
        namespace: record.namespace,
        name: record.name,
        usage_scenario: record.usage_scenario,
        permissions: record.permissions,
      };
    },
  },
  'token list': {
    needs: ['user', 'namespace'],
    run: async (db, v) => ({ data: await listAccessTokens(db, await userIdOf(db, v.user!), v.namespace!) }),
  },
  // Prints key ids only: a private key never leaves src/open/signingKeys.ts.
  'keys rotate': { needs: [], run: async (db, _v, sealer) => rotateSigningKey(db, sealer) },
  // Prints counts and the key's one-way id only.
  'secrets reseal': { needs: [], run: async (db, _v, sealer) => ({ key_id: sealer.currentKeyId, ...(await sealAllSecrets(db, sealer)) }) },
  migrate: { needs: [], run: async (db, _v, sealer) => ({ applied: await migrateLatest(db, { sealer }) }) },
  'migrate rollback': {
    needs: [],
    run: async (db, v, sealer) => ({ rolled_back: await migrateRollback(db, { all: v.all ?? false, sealer }) }),
  },
};

function printHuman(output: Output): void {
  for (const [key, value] of Object.entries(output)) {
    if (Array.isArray(value)) {
      console.log(`${key}:`);
      for (const item of value) console.log(`  ${typeof item === 'object' ? JSON.stringify(item) : String(item)}`);
    } else {
      console.log(`${key}: ${String(value)}`);
    }
  }
}

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    console.error(`admin: ${(err as Error).message}\nRun with --help for usage.`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const name = positionals.join(' ');
  const command = commands[name];
  if (!command) {
    console.error(`admin: ${name ? `unknown command "${name}"` : 'no command given'}\nRun with --help for usage.`);
    return 2;
  }

  try {
    required(values, ...command.needs);
    const config = loadConfig();
    const isMigration = name.startsWith('migrate');
    const database = await openDatabase(config, { migrate: !isMigration, poolMax: 2 });
    try {
      const output = await command.run(database.db, values, database.sealer);
      if (values.json) console.log(JSON.stringify(output));
      else printHuman(output);
      return 0;
    } finally {
      await database.close();
    }
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`admin ${name}: ${err.message}\nRun with --help for usage.`);
      return 2;
    }
    if (err instanceof Problem || err instanceof ConfigError || err instanceof SealingError) {
      console.error(`admin ${name}: ${err.message}`);
      return 1;
    }
    console.error(`admin ${name}: unexpected error: ${(err as Error).stack ?? String(err)}`);
    return 1;
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
