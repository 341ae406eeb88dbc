import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { AppContext } from '../context.ts';
import { getOrCreateSecret } from './secrets.ts';

const cache = new WeakMap<Knex, Promise<Buffer>>();

/** The HMAC key of session cookies and CSRF tokens: generated once, shared by every process. */
export function loadSessionKey(ctx: AppContext): Promise<Buffer> {
  let key = cache.get(ctx.db);
  if (!key) {
    key = getOrCreateSecret(ctx, 'session_key', () => randomBytes(32).toString('base64url')).then((v) =>
      Buffer.from(v, 'base64url'),
    );
    key.catch(() => cache.delete(ctx.db));
    cache.set(ctx.db, key);
  }
  return key;
}
