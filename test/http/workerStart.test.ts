// `npm run worker` serves no HTTP, so PORT is not its business: a worker started with
// PORT=0 (a value the API refuses) starts and stops cleanly on SIGTERM.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect, it } from 'vitest';
import { createTestDb } from '../support/db.ts';
import { TEST_SECRETS_KEY } from '../support/secrets.ts';

it('starts a worker with PORT=0 and stops it on SIGTERM with exit 0', async () => {
  const testDb = await createTestDb('pg');
  try {
    let text = '';
    const { BASE_URL: _ignored, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
    const env = {
      ...inherited,
      NODE_ENV: 'production',
      PORT: '0',
      DATABASE_URL: testDb.url,
      SECRETS_KEY: TEST_SECRETS_KEY,
    };
    const child = spawn('sh', ['scripts/node.sh', 'src/worker.ts'], { env });
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    const exited = once(child, 'exit');
    for (let i = 0; i < 300 && !text.includes('worker started') && child.exitCode === null; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(text).toContain('worker started');
    expect(text).not.toMatch(/PORT/);
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code, text).toBe(0);
  } finally {
    await testDb.destroy();
  }
}, 60_000);
