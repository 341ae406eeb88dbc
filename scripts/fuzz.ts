// `npm run test:fuzz`: schemathesis (from PyPI, in .venv) over every operation of openapi.yaml,
// against the live service on a fresh database, with all default checks, stateful testing through
// the spec's OpenAPI links, and the hooks of contract-tests/schemathesis_hooks.py (real OAuth
// success paths, two identities). A fresh seed each run, printed so that a failure can be replayed
// with FUZZ_SEED=N. Extra arguments go to `st run` (e.g. --max-examples 200).
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startLiveService } from '../contract-tests/liveService.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const setup = spawnSync('sh', ['scripts/schemathesis.sh'], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
if (setup.status !== 0) process.exit(setup.status ?? 1);
const st = setup.stdout.trim().split('\n').pop()!;

const seed = process.env.FUZZ_SEED ?? String(randomInt(2 ** 31));
console.log(`schemathesis seed: ${seed} (replay this run with FUZZ_SEED=${seed} npm run test:fuzz)`);

// Every positive token request is a real one here (a code minted through login and consent), far
// more than a client makes in a minute: the token limit would answer most of them 429. Negative
// cases fail client authentication by the hundred from one address, and user A starts hundreds of
// runs: the failure limit and the run quotas would refuse the positive cases after them.
const live = await startLiveService({
  TOKEN_RATE_LIMIT_PER_MINUTE: '1000000',
  TOKEN_FAILED_AUTH_LIMIT_PER_MINUTE: '1000000',
  USER_MAX_CONCURRENT_RUNS: '1000000',
  USER_RUNS_PER_MINUTE: '1000000',
});
let status = 1;
try {
  const { CONTRACT_ACCESS_TOKEN, CONTRACT_NAMESPACE, CONTRACT_TOKEN_ID } = live.credentials;
  // A proxy token for the gateway, through the token detail endpoint like a third-party app.
  const detail = await fetch(`${live.baseUrl}/api/open/v1/${CONTRACT_NAMESPACE}/tokens/${CONTRACT_TOKEN_ID}`, {
    headers: { Authorization: `Bearer ${CONTRACT_ACCESS_TOKEN}` },
  });
  const proxy = detail.ok
    ? ((await detail.json()) as { proxy_access_token: string }).proxy_access_token
    : 'unavailable';
  mkdirSync(`${root}/artifacts`, { recursive: true });
  const result = spawnSync(
    st,
    [
      'run',
      'openapi.yaml',
      '--url',
      live.baseUrl,
      '--seed',
      seed,
      '--report',
      'junit',
      '--report-dir',
      'artifacts/schemathesis',
      ...process.argv.slice(2),
    ],
    {
      cwd: root,
      stdio: 'inherit',
      env: {
        ...process.env,
        ...live.credentials,
        CONTRACT_PROXY_TOKEN: proxy,
        FUZZ_BASE_URL: live.baseUrl,
        FUZZ_SEED: seed,
        SCHEMATHESIS_HOOKS: 'contract-tests/schemathesis_hooks.py',
      },
    },
  );
  status = result.status ?? 1;
  if (status !== 0)
    console.error(
      `\n--- service output (last 8000 chars) ---\n${live.output().slice(-8000)}\n\nschemathesis seed: ${seed}`,
    );
} finally {
  await live.stop();
}
process.exit(status);
