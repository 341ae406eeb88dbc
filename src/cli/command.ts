// What every admin CLI command is (src/cli/commands.ts lists them): its options, the values
// parsed from the command line, its output, and the helpers the command groups share.
import type { parseArgs } from 'node:util';
import { findUserByLogin } from '../accounts/users.ts';
import { userNotFound } from '../shared/errors.ts';
import type { SealerContext } from '../context.ts';

/** Each command: its usage line, what it does (for --help), the options it takes and needs, and its work. */
export interface Command {
  usage: string;
  summary?: string;
  options: Array<keyof Values>;
  needs: Array<keyof Values>;
  /** Checks of the options' values that need no database: a usage error comes before the database is opened. */
  check?: (v: Values) => void;
  run: (ctx: SealerContext, v: Values) => Promise<Output>;
}

export const options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  all: { type: 'boolean' },
  id: { type: 'string' },
  'client-id': { type: 'string' },
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
  'id-token-alg': { type: 'string' },
  pkce: { type: 'string' },
  alg: { type: 'string' },
  now: { type: 'boolean' },
  user: { type: 'string' },
  'usage-scenario': { type: 'string' },
  permission: { type: 'string', multiple: true },
  'expires-in': { type: 'string' },
  'expires-at': { type: 'string' },
  'even-the-last': { type: 'boolean' },
} as const;

export type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values'];
export type Output = Record<string, unknown>;

/** Wrong command line: printed with a pointer to --help, exit status 2. */
export class UsageError extends Error {}

export function required(values: Values, ...names: Array<keyof Values>): void {
  const missing = names.filter((n) => values[n] === undefined);
  if (missing.length) throw new UsageError(`missing ${missing.map((n) => `--${String(n)}`).join(', ')}`);
}

export async function userIdOf(ctx: SealerContext, login: string): Promise<number> {
  const user = await findUserByLogin(ctx, login);
  if (!user) throw userNotFound(login);
  return user.id;
}

export function idOf(value: string, what: string): number {
  if (!/^[1-9]\d{0,15}$/.test(value)) throw new UsageError(`--id must be the ${what}'s numeric id (got "${value}")`);
  return Number(value);
}

export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
