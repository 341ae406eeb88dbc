// `npm run test:fuzz`: schemathesis (from PyPI, in .venv) over every operation of openapi.yaml,
// against the live service on a fresh database, with all default checks and stateful testing
// through the spec's OpenAPI links. Extra arguments go to `st run` (e.g. --max-examples 100).
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startLiveService } from '../contract-tests/liveService.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const setup = spawnSync('sh', ['scripts/schemathesis.sh'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
if (setup.status !== 0) process.exit(setup.status ?? 1);
const st = setup.stdout.trim().split('\n').pop()!;

const live = await startLiveService();
let status = 1;
try {
  const { CONTRACT_ACCESS_TOKEN, CONTRACT_NAMESPACE, CONTRACT_TOKEN_ID } = live.credentials;
  // A proxy token for the gateway, through the token detail endpoint like a third-party app.
  const detail = await fetch(`${live.baseUrl}/api/open/v1/${CONTRACT_NAMESPACE}/tokens/${CONTRACT_TOKEN_ID}`, {
    headers: { Authorization: `Bearer ${CONTRACT_ACCESS_TOKEN}` },
  });
  const proxy = detail.ok ? ((await detail.json()) as { proxy_access_token: string }).proxy_access_token : 'unavailable';
  mkdirSync(`${root}/artifacts`, { recursive: true });
  const result = spawnSync(
    st,
    ['run', 'openapi.yaml', '--url', live.baseUrl, '--report', 'junit', '--report-dir', 'artifacts/schemathesis', ...process.argv.slice(2)],
    { cwd: root, stdio: 'inherit', env: { ...process.env, ...live.credentials, CONTRACT_PROXY_TOKEN: proxy } },
  );
  status = result.status ?? 1;
  if (status !== 0) console.error(`\n--- service output (last 8000 chars) ---\n${live.output().slice(-8000)}`);
} finally {
  await live.stop();
}
process.exit(status);
