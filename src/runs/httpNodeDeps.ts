// What a worker hands its runs' http_request nodes: the operator's outbound policy and bounds
// (config), and the run owner's secrets, opened only when a node sends them.
import type { AppContext } from '../context.ts';
import type { Config } from '../config.ts';
import { allowListOf } from '../outbound/index.ts';
import { openSecrets } from '../secrets/service.ts';
import type { HttpNodeDeps } from './httpRequest.ts';

type Ctx = Pick<AppContext, 'db'> & { config: Config } & Partial<Pick<AppContext, 'sealer'>>;

/** A process without the key-encryption key (a test's bare executor) opens no secret. */
export function httpNodeDeps(ctx: Ctx | { config: Config }, userId: number): HttpNodeDeps {
  return {
    policy: { allow: allowListOf(ctx.config.WORKFLOW_HTTP_ALLOW_HOSTS) },
    maxTimeoutMs: ctx.config.WORKFLOW_HTTP_TIMEOUT_SECONDS * 1000,
    maxBytes: ctx.config.WORKFLOW_HTTP_MAX_RESPONSE_BYTES,
    secrets: async (names) =>
      'db' in ctx && ctx.sealer ? openSecrets({ db: ctx.db, sealer: ctx.sealer }, userId, names) : new Map(),
  };
}
