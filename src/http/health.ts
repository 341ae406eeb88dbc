import type { Operations } from './operations.ts';
import type { AppContext } from '../context.ts';

const CHECK_TIMEOUT_MS = 2000;

async function check(probe: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

export function healthOperations(ctx: AppContext): Operations {
  return {
    getLiveness(_req, res) {
      res.json({ status: 'ok' });
    },
    async getReadiness(_req, res) {
      const checks: Record<string, 'ok' | 'unavailable'> = {
        database: await check(() => ctx.db.raw('select 1')),
      };
      if (ctx.queueHealth) checks.queue = await check(ctx.queueHealth);
      // The process is stopping: a load balancer must send it nothing new, whatever its databases say.
      if (ctx.stopping) checks.shutdown = 'unavailable';
      const ready = Object.values(checks).every((c) => c === 'ok');
      if (!ready) res.setHeader('Retry-After', '5');
      res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', checks });
    },
  };
}
