// `npm run test:contract -- --target mock|URL`: runs the contract suite against the Prism mock
// (default) or a live service (credentials in CONTRACT_* variables, see target.ts).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { liveStoreFromEnv, startLiveService, type LiveService } from './liveService.ts';
import { freePort } from '../test/support/processes.ts';
import { startPrism } from './prism.ts';

const { values } = parseArgs({
  options: { target: { type: 'string', default: process.env.CONTRACT_TARGET ?? 'mock' }, help: { type: 'boolean' } },
});
if (values.help) {
  console.log(
    'usage: npm run test:contract -- [--target mock|http://host:port]\n' +
      'With --target live, CONTRACT_STORE=production runs the service on MySQL (TEST_MYSQL_URL) with NODE_ENV=production.\n' +
      'Against a live service, set CONTRACT_API_KEY, CONTRACT_ACCESS_TOKEN, CONTRACT_REFRESH_TOKEN,\n' +
      'CONTRACT_CLIENT_ID, CONTRACT_CLIENT_SECRET, CONTRACT_NAMESPACE and CONTRACT_TOKEN_ID.',
  );
  process.exit(0);
}

const root = fileURLToPath(new URL('..', import.meta.url));
const env: NodeJS.ProcessEnv = { ...process.env };
let prism: Awaited<ReturnType<typeof startPrism>> | undefined;
let live: LiveService | undefined;
if (values.target === 'mock') {
  const port = await freePort();
  prism = await startPrism(port, { quiet: true });
  env.CONTRACT_TARGET = `http://127.0.0.1:${port}`;
  env.CONTRACT_MOCK = '1';
} else if (values.target === 'live') {
  live = await startLiveService();
  Object.assign(env, live.credentials, { CONTRACT_TARGET: live.baseUrl });
} else {
  env.CONTRACT_TARGET = values.target;
}

// Under CI, a JUnit report per target (scripts/ci-totals.ts sums them).
const target = values.target === 'mock' ? 'mock' : values.target === 'live' ? `live-${liveStoreFromEnv()}` : 'url';
const junit = process.env.CI
  ? ['--reporter=default', '--reporter=junit', `--outputFile.junit=artifacts/contract-${target}/junit.xml`]
  : [];
const result = spawnSync(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--config', 'contract-tests/vitest.config.ts', ...junit],
  {
    cwd: root,
    env,
    stdio: 'inherit',
  },
);
prism?.kill();
if (live) {
  if (result.status !== 0) console.error(`\n--- service output ---\n${live.output()}`);
  await live.stop();
}
process.exit(result.status ?? 1);
