// knex's own messages (connection failures with their stacks, deprecations) go through pino as one
// JSON object per line, never to the console.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../http/logger.ts';
import { freePort } from '../../test/support/processes.ts';
import { createKnex } from './knex.ts';

function collectingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ level: 'warn', destination }), lines };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each([
  ['mysql', (port: number) => `mysql://app:secret-password@127.0.0.1:${port}/nothing`],
  ['pg', (port: number) => `postgres://app:secret-password@127.0.0.1:${port}/nothing`],
])('knex logging on %s', (_dialect, urlOf) => {
  it('logs a refused connection through pino as JSON lines, with nothing on the console', async () => {
    const console = vi.spyOn(globalThis.console, 'log');
    const consoleWarn = vi.spyOn(globalThis.console, 'warn');
    const { logger, lines } = collectingLogger();
    const db = createKnex(urlOf(await freePort()), { logger });
    try {
      await expect(db.raw('select 1')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await db.destroy();
    }
    expect(console).not.toHaveBeenCalled();
    expect(consoleWarn).not.toHaveBeenCalled();
    const entries = lines.map((line) => JSON.parse(line) as { level: number; component?: string; msg: string });
    const acquire = entries.find((e) => e.msg.startsWith('Acquire connection error'));
    expect(acquire).toMatchObject({ level: 40, component: 'knex' });
    expect(acquire!.msg).toContain('ECONNREFUSED');
    expect(lines.join('\n')).not.toContain('secret-password');
  });
});
