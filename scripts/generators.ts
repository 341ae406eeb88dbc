// `npm run test:generators`: clients generated from openapi.yaml by tools nobody here wrote,
// compiled, and driven against the live service (contract-tests/generators/README.md):
// openapi-generator (python, go, typescript-fetch; its jar from Maven Central through Maven),
// openapi-python-client (PyPI, in .venv) and oapi-codegen (the Go module proxy). Installs are
// idempotent and kept under .tools/ and .venv/. A JUnit report lands in artifacts/generators/.
// Arguments pick clients by name (`npm run test:generators -- typescript`).
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLiveService } from '../contract-tests/liveService.ts';

const OPENAPI_GENERATOR_VERSION = '7.25.0';
const OAPI_CODEGEN = 'github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2';
const OPENAPI_PYTHON_CLIENT = 'openapi-python-client==0.29.1';
// What the two generated Python clients import at run time.
const PYTHON_RUNTIME = ['pydantic>=2', 'python-dateutil', 'urllib3>=2', 'typing-extensions', 'httpx', 'attrs'];

const root = fileURLToPath(new URL('..', import.meta.url));
const work = path.join(root, '.tools/generators');
const drivers = path.join(root, 'contract-tests/generators');
const spec = path.join(root, 'openapi.yaml');

interface Outcome {
  name: string;
  ms: number;
  failure?: string;
}
const outcomes: Outcome[] = [];

/** Runs a command; throws with its output when it fails. */
function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync(command, args, { cwd: options.cwd ?? root, env: options.env ?? process.env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}):\n${output.slice(-4000)}`);
  return output;
}

/** Same, without blocking this process's event loop (the fake model provider lives here). */
function runAsync(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    // A driver that cannot start (not built) is that client's failure, not the end of the job.
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(Object.assign(err, { output }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(Object.assign(new Error(`exit ${code}`), { output }));
    });
  });
}

function record(name: string, fn: () => void): boolean {
  const started = Date.now();
  try {
    fn();
    outcomes.push({ name, ms: Date.now() - started });
    console.log(`ok   ${name}`);
    return true;
  } catch (err) {
    outcomes.push({ name, ms: Date.now() - started, failure: (err as Error).message });
    console.log(`FAIL ${name}\n${(err as Error).message}`);
    return false;
  }
}

// --- tools (idempotent) ---
const jar = path.join(root, `.tools/openapi-generator/openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`);
const python = path.join(root, '.venv/bin/python');
const onPath = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
function installTools(): void {
  // Java and Maven from Debian when the machine lacks them; Go comes with the machine (Debian's is too old).
  if (!onPath('mvn') || !onPath('java')) {
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'maven', 'openjdk-17-jdk-headless']);
  }
  if (!existsSync(jar)) {
    run('mvn', ['-q', '-B', 'dependency:copy', `-Dartifact=org.openapitools:openapi-generator-cli:${OPENAPI_GENERATOR_VERSION}`, `-DoutputDirectory=${path.dirname(jar)}`]);
  }
  run('sh', ['scripts/schemathesis.sh']); // creates .venv when missing
  if (!existsSync(path.join(root, '.venv/bin/openapi-python-client'))) {
    run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', OPENAPI_PYTHON_CLIENT, ...PYTHON_RUNTIME]);
  }
  run('go', ['version']);
  run('java', ['-version']);
}

// --- a model provider of our own, in the OpenAI wire format ---
/** `hang`: never answers (the run stays running); `fail`: a provider error; else the text in capitals. */
async function startFakeProvider(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const held = new Set<ServerResponse>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; messages: { content: string }[] };
    const text = body.messages.at(-1)?.content ?? '';
    if (text === 'hang') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if (text === 'fail') {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'The fake provider refuses this input.', type: 'invalid_request_error', param: null, code: null } }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({
      id: 'chatcmpl-fake', object: 'chat.completion', created: 1_795_000_000, model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: text.toUpperCase() }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: async () => {
      for (const res of held) res.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

// --- the five clients: generate, compile, and how to run their driver ---
interface Client {
  name: string;
  generate(): void;
  compile(): void;
  /** The driver's command, cwd and extra environment. */
  driver(): { command: string; args: string[]; cwd: string; env?: Record<string, string> };
}

const generator = (lang: string, out: string, ...extra: string[]) =>
  run('java', ['-jar', jar, 'generate', '-i', spec, '-g', lang, '-o', out, '--skip-validate-spec', ...extra]);

const goModule = (dir: string, requires: string) => {
  writeFileSync(path.join(dir, 'go.mod'), `module driver\n\ngo 1.23\n${requires}`);
  run('go', ['mod', 'tidy'], { cwd: dir });
  run('go', ['build', '-o', 'driver', '.'], { cwd: dir });
};

const clients: Client[] = [
  {
    name: 'openapi-generator python',
    generate: () => generator('python', path.join(work, 'python'), '--package-name', 'openauth_client'),
    compile: () => run(python, ['-m', 'compileall', '-q', 'openauth_client'], { cwd: path.join(work, 'python') }),
    driver: () => ({ command: python, args: [path.join(drivers, 'openapi_generator_python.py')], cwd: work, env: { PYTHONPATH: path.join(work, 'python') } }),
  },
  {
    name: 'openapi-python-client',
    generate: () => run(path.join(root, '.venv/bin/openapi-python-client'), ['generate', '--path', spec, '--output-path', path.join(work, 'opc/openauth_opc'), '--meta', 'none', '--overwrite']),
    compile: () => run(python, ['-m', 'compileall', '-q', 'openauth_opc'], { cwd: path.join(work, 'opc') }),
    driver: () => ({ command: python, args: [path.join(drivers, 'openapi_python_client.py')], cwd: work, env: { PYTHONPATH: path.join(work, 'opc') } }),
  },
  {
    name: 'openapi-generator go',
    generate: () => {
      generator('go', path.join(work, 'go/client'), '--package-name', 'openauth', '--git-user-id', 'openauth', '--git-repo-id', 'client');
      rmSync(path.join(work, 'go/client/test'), { recursive: true, force: true });
    },
    compile: () => {
      copyFileSync(path.join(drivers, 'openapi-generator-go/main.go'), path.join(work, 'go/main.go'));
      copyFileSync(path.join(drivers, 'common.go'), path.join(work, 'go/common.go'));
      goModule(path.join(work, 'go'), 'require github.com/openauth/client v0.0.0\nreplace github.com/openauth/client => ./client\n');
    },
    driver: () => ({ command: path.join(work, 'go/driver'), args: [], cwd: work }),
  },
  {
    name: 'oapi-codegen',
    generate: () => {
      mkdirSync(path.join(work, 'oapi/client'), { recursive: true });
      // Written by the tool itself: on a fresh machine `go run` also prints its downloads.
      run('go', ['run', OAPI_CODEGEN, '-generate', 'types,client', '-package', 'client', '-o', path.join(work, 'oapi/client/client.gen.go'), spec]);
    },
    compile: () => {
      copyFileSync(path.join(drivers, 'oapi-codegen/main.go'), path.join(work, 'oapi/main.go'));
      copyFileSync(path.join(drivers, 'common.go'), path.join(work, 'oapi/common.go'));
      goModule(path.join(work, 'oapi'), '');
    },
    driver: () => ({ command: path.join(work, 'oapi/driver'), args: [], cwd: work }),
  },
  {
    name: 'openapi-generator typescript-fetch',
    generate: () => generator('typescript-fetch', path.join(work, 'ts/gen'), '-p', 'supportsES6=true'),
    compile: () => {
      const dir = path.join(work, 'ts');
      copyFileSync(path.join(drivers, 'typescript-fetch/main.ts'), path.join(dir, 'main.ts'));
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { strict: true, target: 'ES2022', module: 'commonjs', moduleResolution: 'node10', lib: ['ES2022', 'DOM'], types: ['node'], typeRoots: [path.join(root, 'node_modules/@types')], outDir: 'dist', skipLibCheck: true },
        files: ['main.ts'],
      }));
      run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir]);
      // CommonJS output, under this repository's "type": "module".
      writeFileSync(path.join(dir, 'dist/package.json'), '{ "type": "commonjs" }\n');
    },
    driver: () => ({ command: process.execPath, args: [path.join(work, 'ts/dist/main.js')], cwd: work }),
  },
];

function junit(): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const failures = outcomes.filter((o) => o.failure).length;
  const cases = outcomes.map((o) => {
    const [suite, ...rest] = o.name.split(': ');
    const open = `  <testcase classname="generators.${esc(suite!)}" name="${esc(rest.join(': ') || o.name)}" time="${(o.ms / 1000).toFixed(3)}"`;
    return o.failure ? `${open}>\n    <failure message="failed">${esc(o.failure)}</failure>\n  </testcase>` : `${open}/>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="generated clients" tests="${outcomes.length}" failures="${failures}">\n${cases.join('\n')}\n</testsuite>\n`;
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const toolsReady = record('tools: openapi-generator jar, openapi-python-client, Go, Java', installTools);
// `npm run test:generators -- go` runs only the clients whose name contains an argument.
const wanted = clients.filter((c) => process.argv.length <= 2 || process.argv.slice(2).some((a) => c.name.includes(a)));
const built = wanted.filter((c) => toolsReady && record(`${c.name}: generate`, c.generate) && record(`${c.name}: compile`, c.compile));

if (built.length > 0) {
  const provider = await startFakeProvider();
  // One run at a time: while a `hang` run holds the worker, the next run stays queued.
  const live = await startLiveService({ MODEL_PROVIDER_BASE_URL: provider.baseUrl, MODEL_PROVIDER_MODELS: 'fake', RUN_CONCURRENCY: '1' });
  try {
    for (const client of built) {
      const name = `${client.name}: create -> run -> read the run in each state -> delete`;
      const started = Date.now();
      const { command, args, cwd, env } = client.driver();
      try {
        const output = await runAsync(command, args, { cwd, env: { ...process.env, ...env, BASE_URL: live.baseUrl, API_KEY: live.credentials.CONTRACT_API_KEY, WORKFLOW_FILE: path.join(drivers, 'workflow.json') } });
        outcomes.push({ name, ms: Date.now() - started });
        console.log(`ok   ${name}\n${output.trim().replace(/^/gm, '       ')}`);
      } catch (err) {
        const output = (err as { output?: string }).output ?? '';
        outcomes.push({ name, ms: Date.now() - started, failure: `${(err as Error).message}\n${output.slice(-4000)}` });
        console.log(`FAIL ${name}\n${output.slice(-4000)}`);
      }
    }
  } finally {
    await live.stop();
    await provider.close();
  }
}

mkdirSync(path.join(root, 'artifacts/generators'), { recursive: true });
writeFileSync(path.join(root, 'artifacts/generators/junit.xml'), junit());
const failed = outcomes.filter((o) => o.failure).length;
console.log(`generated clients: ${outcomes.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 && outcomes.length > 0 ? 0 : 1);
