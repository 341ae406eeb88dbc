// The admin CLI (entry: admin.ts): `npm run -s admin -- COMMAND [options]`. Uses the same services as the HTTP API,
// on the database the service itself would use (DATABASE_URL, else the embedded PostgreSQL).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { databaseProblem, openDatabase } from '../db/connect.ts';
import { EmbeddedPostgresError } from '../db/embedded.ts';
import { Problem } from '../shared/errors.ts';
import { setPasswordHashCost } from '../shared/crypto.ts';
import { revocationLease } from '../shared/principalLease.ts';
import { SealingError } from '../shared/sealing.ts';
import { commands, groups, options, required, UsageError, type Command, type Output, type Values } from './commands.ts';

/** A refusal that is not the service's (no database yet): exit status 1. */
class RefusedError extends Error {}

function usage(group?: string): string {
  const lines = Object.entries(commands)
    .filter(([name]) => !group || name.split(' ')[0] === group)
    .map(([, c]) => `  ${c.usage}${c.summary ? `\n      ${c.summary}` : ''}`);
  return `Usage: npm run -s admin -- ${group ?? 'COMMAND'}${group && !commands[group] ? ' SUBCOMMAND' : ''} [options] [--json]

${group ? `Commands of "${group}"` : 'Commands'}:
${lines.join('\n')}

Options:
  --json   print exactly one JSON object on stdout (on failure: {"error": {"code", "message"}})
  --help   print this help

Connects to DATABASE_URL, or to the embedded PostgreSQL under DATA_DIR when it is unset (created by
the first \`npm start\`), and applies pending migrations first.
Exit status: 0 done, 1 refused or failed, 2 bad usage.`;
}

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

/** The command named by the words before the first option (`user create`, `migrate`, ...). */
function commandWords(argv: string[]): string[] {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-') || words.length === 2) break;
    words.push(arg);
  }
  return words;
}

/** Exactly what the command line asked for, or a UsageError that says what is wrong. */
function parseFor(argv: string[], name: string, command: Command | undefined): Values {
  const allowed = new Set<string>(['json', 'help', ...(command?.options ?? [])]);
  const mine = Object.fromEntries(Object.entries(options).filter(([key]) => allowed.has(key)));
  try {
    const { values, positionals } = parseArgs({ args: argv, options: mine, allowPositionals: true, strict: true });
    const extra = positionals.slice(name.split(' ').length);
    if (command && extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
    return values as Values;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as { code?: string }).code;
    const message = (err as Error).message;
    const flag = /'(-[^' ]+)/.exec(message)?.[1];
    const takes = command?.options.length ? ` (${name} takes ${command.options.map((o) => `--${o}`).join(', ')})` : '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const known = flag && flag.replace(/^-+/, '') in options;
      throw new UsageError(
        known ? `option ${flag} does not apply to ${name}${takes}` : `unknown option ${flag ?? message}${takes}`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
      throw new UsageError(flag ? `option ${flag} needs a value` : message);
    throw new UsageError(message);
  }
}

/**
 * The embedded PostgreSQL is created by the service's first start; the CLI never makes an empty one
 * where the operator expected data (a mistyped DATA_DIR).
 */
function checkDatabaseExists(config: Config): void {
  if (config.DATABASE_URL) return;
  const pgDir = path.join(config.DATA_DIR, 'pg');
  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    throw new RefusedError(
      `no database in DATA_DIR (${path.resolve(pgDir)} does not exist): start the service once (npm start) to create it, set DATA_DIR to the service's data directory, or set DATABASE_URL.`,
    );
  }
}

type Failure = { status: number; code: string; message: string };

function failureOf(err: unknown, config: Config | undefined): Failure {
  if (err instanceof UsageError) return { status: 2, code: 'usage', message: err.message };
  if (err instanceof Problem) return { status: 1, code: err.code, message: err.message };
  if (err instanceof ConfigError) return { status: 1, code: 'config', message: err.message };
  if (err instanceof SealingError) return { status: 1, code: 'secrets', message: err.message };
  if (err instanceof RefusedError) return { status: 1, code: 'no_database', message: err.message };
  if (err instanceof EmbeddedPostgresError) return { status: 1, code: 'database', message: err.message };
  const line = config?.DATABASE_URL ? databaseProblem(err, config.DATABASE_URL, 'DATABASE_URL') : undefined;
  if (line) return { status: 1, code: 'database', message: line };
  return { status: 1, code: 'internal', message: `unexpected error: ${(err as Error).stack ?? String(err)}` };
}

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const words = commandWords(argv);
  const name = words.join(' ');
  const command = commands[name];
  const group = !command && words.length === 1 && groups.includes(words[0]!) ? words[0] : undefined;
  const fail = ({ status, code, message }: Failure): number => {
    if (json) console.log(JSON.stringify({ error: { code, message } }));
    else
      console.error(`admin${name ? ` ${name}` : ''}: ${message}${status === 2 ? '\nRun with --help for usage.' : ''}`);
    return status;
  };

  if (!command) {
    const asked = argv.includes('--help') || argv.includes('-h');
    if (name && !group)
      return fail({ status: 2, code: 'usage', message: `unknown command "${name}" (commands: ${groups.join(', ')})` });
    // `admin --help`, `admin user --help`: the help asked for. `admin`, `admin user`: the same help, as a usage error.
    if (asked) {
      console.log(usage(group));
      return 0;
    }
    const subcommands = Object.keys(commands).filter((c) => group && c.startsWith(`${group} `));
    if (json)
      return fail({
        status: 2,
        code: 'usage',
        message: group ? `"${group}" needs a subcommand: ${subcommands.join(', ')}` : 'no command given',
      });
    console.error(usage(group));
    return 2;
  }

  let config: Config | undefined;
  try {
    const values = parseFor(argv, name, command);
    if (values.help) {
      console.log(usage(name.split(' ')[0]));
      return 0;
    }
    required(values, ...command.needs);
    command.check?.(values);
    config = loadConfig();
    setPasswordHashCost(config.PASSWORD_HASH_COST);
    revocationLease.expect(config.PRINCIPAL_CACHE_MS); // a revoking command answers once no service process honours what it revoked
    checkDatabaseExists(config);
    const isMigration = name.startsWith('migrate');
    const database = await openDatabase(config, { migrate: !isMigration, poolMax: 2 });
    try {
      const output = await command.run({ db: database.db, sealer: database.sealer }, values);
      if (values.json) console.log(JSON.stringify(output));
      else printHuman(output);
      return 0;
    } finally {
      await database.close();
    }
  } catch (err) {
    return fail(failureOf(err, config));
  }
}
