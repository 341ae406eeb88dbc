import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.ts';
import { createSealer, KEK_BYTES, type Sealer } from './sealing.ts';

/** Where a development service keeps its generated key-encryption key (never used in production). */
export function localKekPath(config: Pick<Config, 'DATA_DIR'>): string {
  return path.join(config.DATA_DIR, 'secrets.key');
}

async function readOrCreateLocalKek(file: string): Promise<Buffer> {
  try {
    return parseKeyFile(file, await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(path.dirname(file), { recursive: true });
  try {
    // `wx`: two first starts at once both try; one writes, the other reads the winner's key.
    await writeFile(file, `${randomBytes(KEK_BYTES).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return parseKeyFile(file, await readFile(file, 'utf8'));
}

function parseKeyFile(file: string, text: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== KEK_BYTES)
    throw new Error(`${file}: not a key-encryption key (expected ${KEK_BYTES} bytes in base64)`);
  return key;
}

/**
 * The sealer of secrets at rest: SECRETS_KEY (and SECRETS_KEY_PREVIOUS for opening) when set;
 * otherwise, outside production only, a key generated once into DATA_DIR/secrets.key (mode 0600),
 * so `npm start` needs no set-up. loadConfig already refuses production without SECRETS_KEY.
 */
export async function loadSealer(
  config: Pick<Config, 'SECRETS_KEY' | 'SECRETS_KEY_PREVIOUS' | 'DATA_DIR' | 'NODE_ENV'>,
): Promise<Sealer> {
  if (config.SECRETS_KEY) return createSealer(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS);
  if (config.NODE_ENV === 'production') throw new Error('SECRETS_KEY is required in production');
  return createSealer(await readOrCreateLocalKek(localKekPath(config)));
}
