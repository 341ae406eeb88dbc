// `npm run test:generators`: clients generated from openapi.yaml by tools nobody here wrote, with
// the commands docs/generators.md gives (contract-tests/generators/commands.ts), compiled, and
// driven against the live service (contract-tests/generators/README.md): openapi-generator
// (python, go, typescript-fetch, java; its jar from Maven Central through Maven),
// openapi-python-client (PyPI, in .venv) and oapi-codegen (the Go module proxy). The drivers talk to
// the service through a proxy that plays a later minor version: every run step they read carries a
// status and a node type of the open enums that no client knows. Installs are idempotent and kept
// under .tools/ and .venv/ (Maven's under ~/.m2). A JUnit report lands in artifacts/generators/.
// Arguments pick clients by name (`npm run test:generators -- typescript`).
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLiveService } from '../contract-tests/liveService.ts';
import {
  COMMANDS,
  OPENAPI_GENERATOR_VERSION,
  OPENAPI_PYTHON_CLIENT,
  type GeneratorCommand,
} from '../contract-tests/generators/commands.ts';
import { startLaterVersion, UNKNOWN_NODE } from '../contract-tests/generators/laterVersion.ts';
import { FIRST_OPEN_RELEASE } from '../src/http/apiVersions.ts';
// What the two generated Python clients import at run time.
const PYTHON_RUNTIME = ['pydantic>=2', 'python-dateutil', 'urllib3>=2', 'typing-extensions', 'httpx', 'attrs'];

const root = fileURLToPath(new URL('..', import.meta.url));
const workRoot = path.join(root, '.tools/generators');
const drivers = path.join(root, 'contract-tests/generators');
const releasesDir = path.join(root, 'contract-tests/releases');
/** The release a client was generated from: the newest (openapi.yaml) or a file of contract-tests/releases/. */
interface Contract {
  label: string;
  spec: string;
  /** `Api-Version` its clients send (docs/generators.md): a release before FIRST_OPEN_RELEASE. */
  apiVersion?: string;
  /** Whether that release can show later-workflow.json's graph (a switch, `case` edges). */
  showsLater: boolean;
}
const contracts: Contract[] = [
  { label: 'openapi.yaml', spec: path.join(root, 'openapi.yaml'), showsLater: true },
  ...readdirSync(releasesDir)
    .filter((f) => /^openapi-\d+\.\d+\.\d+\.yaml$/.test(f))
    // A release that is openapi.yaml as it stands makes the same clients: generated once.
    .filter(
      (f) => readFileSync(path.join(releasesDir, f), 'utf8') !== readFileSync(path.join(root, 'openapi.yaml'), 'utf8'),
    )
    .map((file) => {
      const [major, minor] = file.slice(8, -5).split('.').map(Number) as [number, number];
      const legacy =
        major * 1000 + minor <
        Number(FIRST_OPEN_RELEASE.split('.')[0]) * 1000 + Number(FIRST_OPEN_RELEASE.split('.')[1]);
      const showsLater = major * 1000 + minor >= 1001; // switch, coalesce and `case` came in 1.1.0
      return {
        label: file,
        spec: path.join(releasesDir, file),
        ...(legacy ? { apiVersion: `${major}.${minor}` } : {}),
        showsLater,
      };
    }),
];

interface Outcome {
  name: string;
  ms: number;
  failure?: string;
}
const outcomes: Outcome[] = [];

/** Runs a command; throws with its output when it fails. */
function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? root,
    env: options.env ?? process.env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}):\n${output.slice(-4000)}`,
    );
  return output;
}

/** Same, without blocking this process's event loop (the fake model provider lives here). */
function runAsync(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<string> {
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
    run('mvn', [
      '-q',
      '-B',
      'dependency:copy',
      `-Dartifact=org.openapitools:openapi-generator-cli:${OPENAPI_GENERATOR_VERSION}`,
      `-DoutputDirectory=${path.dirname(jar)}`,
    ]);
  }
  run('sh', ['scripts/schemathesis.sh']); // creates .venv when missing
  if (!existsSync(path.join(root, '.venv/bin/openapi-python-client'))) {
    run(python, [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      OPENAPI_PYTHON_CLIENT,
      ...PYTHON_RUNTIME,
    ]);
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
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      model: string;
      messages: { content: string }[];
    };
    const text = body.messages.at(-1)?.content ?? '';
    if (text === 'hang') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if (text === 'fail') {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: 'The fake provider refuses this input.',
            type: 'invalid_request_error',
            param: null,
            code: null,
          },
        }),
      );
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        created: 1_795_000_000,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: text.toUpperCase() }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
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

// --- the six clients: generate, compile, and how to run their driver ---
interface Client {
  name: string;
  generate(): void;
  compile(): void;
  /** The driver's command, cwd and extra environment. */
  driver(): { command: string; args: string[]; cwd: string; env?: Record<string, string> };
}

/** Runs a generator's command from the guide, on this contract file, into `out`. */
function generate(command: GeneratorCommand, spec: string, out: string): void {
  const args = command.argv.map((a) => (a === 'openapi.yaml' ? spec : a === command.out ? out : a));
  const [tool, ...rest] = args;
  if (tool === 'openapi-generator-cli') run('java', ['-jar', jar, ...rest]);
  else if (tool === 'openapi-python-client') run(path.join(root, '.venv/bin/openapi-python-client'), rest);
  else run(tool!, rest);
}

const goModule = (dir: string, requires: string) => {
  writeFileSync(path.join(dir, 'go.mod'), `module driver\n\ngo 1.23\n${requires}`);
  run('go', ['mod', 'tidy'], { cwd: dir });
  run('go', ['build', '-o', 'driver', '.'], { cwd: dir });
};

/** The six clients of one contract file, generated into `work` (a folder of that file's own). */
const clientsOf = (spec: string, work: string): Client[] => [
  {
    name: 'openapi-generator python',
    generate: () => generate(COMMANDS.python, spec, path.join(work, 'python')),
    compile: () => run(python, ['-m', 'compileall', '-q', 'openauth_client'], { cwd: path.join(work, 'python') }),
    driver: () => ({
      command: python,
      args: [path.join(drivers, 'openapi_generator_python.py')],
      cwd: work,
      env: { PYTHONPATH: path.join(work, 'python') },
    }),
  },
  {
    name: 'openapi-python-client',
    generate: () => generate(COMMANDS.openapiPythonClient, spec, path.join(work, 'opc/openauth_opc')),
    compile: () => run(python, ['-m', 'compileall', '-q', 'openauth_opc'], { cwd: path.join(work, 'opc') }),
    driver: () => ({
      command: python,
      args: [path.join(drivers, 'openapi_python_client.py')],
      cwd: work,
      env: { PYTHONPATH: path.join(work, 'opc') },
    }),
  },
  {
    name: 'openapi-generator go',
    generate: () => {
      generate(COMMANDS.go, spec, path.join(work, 'go/client'));
      rmSync(path.join(work, 'go/client/test'), { recursive: true, force: true });
    },
    compile: () => {
      copyFileSync(path.join(drivers, 'openapi-generator-go/main.go'), path.join(work, 'go/main.go'));
      copyFileSync(path.join(drivers, 'common.go'), path.join(work, 'go/common.go'));
      goModule(
        path.join(work, 'go'),
        'require github.com/openauth/client v0.0.0\nreplace github.com/openauth/client => ./client\n',
      );
    },
    driver: () => ({ command: path.join(work, 'go/driver'), args: [], cwd: work }),
  },
  {
    name: 'oapi-codegen',
    generate: () => {
      mkdirSync(path.join(work, 'oapi/client'), { recursive: true });
      // Written by the tool itself (-o): on a fresh machine `go run` also prints its downloads.
      generate(COMMANDS.oapiCodegen, spec, path.join(work, 'oapi/client/client.gen.go'));
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
    generate: () => generate(COMMANDS.typescriptFetch, spec, path.join(work, 'ts/gen')),
    compile: () => {
      const dir = path.join(work, 'ts');
      copyFileSync(path.join(drivers, 'typescript-fetch/main.ts'), path.join(dir, 'main.ts'));
      // ES modules as Node runs them (importFileExtension=.js makes the imports resolvable).
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2022', 'DOM'],
            types: ['node'],
            typeRoots: [path.join(root, 'node_modules/@types')],
            outDir: 'dist',
            skipLibCheck: true,
          },
          files: ['main.ts'],
        }),
      );
      writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
      run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir]);
    },
    driver: () => ({ command: process.execPath, args: [path.join(work, 'ts/dist/main.js')], cwd: work }),
  },
  {
    name: 'openapi-generator java',
    generate: () => generate(COMMANDS.java, spec, path.join(work, 'java')),
    compile: () => {
      const dir = path.join(work, 'java');
      // Maven only resolves the generated pom's dependencies (its build plugins would add minutes);
      // javac compiles the client and the driver.
      run(
        'mvn',
        ['-q', '-B', 'dependency:build-classpath', '-Dmdep.outputFile=classpath.txt', '-Dmdep.includeScope=compile'],
        { cwd: dir },
      );
      copyFileSync(path.join(drivers, 'openapi-generator-java/Main.java'), path.join(dir, 'Main.java'));
      const sources = run('find', ['src/main/java', '-name', '*.java'], { cwd: dir }).trim().split('\n');
      run(
        'javac',
        [
          '-nowarn',
          '-d',
          'classes',
          '-cp',
          readFileSync(path.join(dir, 'classpath.txt'), 'utf8').trim(),
          ...sources,
          'Main.java',
        ],
        { cwd: dir },
      );
    },
    driver: () => {
      const dir = path.join(work, 'java');
      return {
        command: 'java',
        args: [
          '-cp',
          `${path.join(dir, 'classes')}:${readFileSync(path.join(dir, 'classpath.txt'), 'utf8').trim()}`,
          'Main',
        ],
        cwd: work,
      };
    },
  },
];

function junit(): string {
  const esc = (s: string) =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const failures = outcomes.filter((o) => o.failure).length;
  const cases = outcomes.map((o) => {
    const [suite, ...rest] = o.name.split(': ');
    const open = `  <testcase classname="generators.${esc(suite!)}" name="${esc(rest.join(': ') || o.name)}" time="${(o.ms / 1000).toFixed(3)}"`;
    return o.failure
      ? `${open}>\n    <failure message="failed">${esc(o.failure)}</failure>\n  </testcase>`
      : `${open}/>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="generated clients" tests="${outcomes.length}" failures="${failures}">\n${cases.join('\n')}\n</testsuite>\n`;
}

rmSync(workRoot, { recursive: true, force: true });
mkdirSync(workRoot, { recursive: true });
const toolsReady = record('tools: openapi-generator jar, openapi-python-client, Go, Java', installTools);
// `npm run test:generators -- go` runs only the clients whose name contains an argument.
const picked = (name: string) => process.argv.length <= 2 || process.argv.slice(2).some((a) => name.includes(a));
const built = contracts.flatMap((contract) => {
  const work = path.join(workRoot, contract.label.replace(/\.yaml$/, ''));
  return clientsOf(contract.spec, work)
    .filter((c) => picked(c.name) && toolsReady)
    .map((c) => ({ ...c, name: `${c.name} (from ${contract.label})`, contract }))
    .filter((c) => record(`${c.name}: generate`, c.generate) && record(`${c.name}: compile`, c.compile));
});

/** A workflow of later-workflow.json and one completed run of it, made with plain HTTP. */
async function laterWorkflow(baseUrl: string, apiKey: string): Promise<{ workflowId: string; runId: string }> {
  const call = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(new URL(url, baseUrl), {
      ...init,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', ...init.headers },
    });
    const body = (await res.json()) as { data: { id: string; status: string } };
    if (res.status >= 300) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    return body.data;
  };
  const workflow = await call('/api/workflows', {
    method: 'POST',
    body: readFileSync(path.join(drivers, 'later-workflow.json')),
  });
  const run = await call(`/api/workflows/${workflow.id}/run`, {
    method: 'POST',
    body: JSON.stringify({ inputs: { ticket: 'call me now' } }),
    headers: { Prefer: 'wait=30' },
  });
  if (run.status !== 'completed') throw new Error(`the later workflow's run is ${run.status}`);
  return { workflowId: workflow.id, runId: run.id };
}

if (built.length > 0) {
  const provider = await startFakeProvider();
  // One run at a time: while a `hang` run holds the worker, the next run stays queued.
  const live = await startLiveService({
    MODEL_PROVIDER_BASE_URL: provider.baseUrl,
    MODEL_PROVIDER_MODELS: 'fake',
    RUN_CONCURRENCY: '1',
  });
  const later = await startLaterVersion(live.baseUrl);
  try {
    const made = await laterWorkflow(live.baseUrl, live.credentials.CONTRACT_API_KEY);
    for (const client of built) {
      const { contract } = client;
      // The newest contract's clients read through the proxy playing the next minor version; an
      // older release's clients read today's service, with the Api-Version of their release.
      const through =
        contract.apiVersion === undefined && contract.label === 'openapi.yaml' ? later.baseUrl : live.baseUrl;
      const laterTypes = contract.label === 'openapi.yaml' ? ['switch', UNKNOWN_NODE.type] : ['switch'];
      const name = `${client.name}: create -> run -> read the run in each state -> read a workflow, a list and a run with node types and fields it does not know, and a problem -> delete`;
      const started = Date.now();
      const { command, args, cwd, env } = client.driver();
      try {
        const output = await runAsync(command, args, {
          cwd,
          env: {
            ...process.env,
            ...env,
            BASE_URL: through,
            API_KEY: live.credentials.CONTRACT_API_KEY,
            ACCESS_TOKEN: live.credentials.CONTRACT_ACCESS_TOKEN,
            WORKFLOW_FILE: path.join(drivers, 'workflow.json'),
            LATER_WORKFLOW_ID: made.workflowId,
            LATER_RUN_ID: made.runId,
            LATER_SHOWN: contract.showsLater ? '1' : '0',
            LATER_NODE_TYPES: laterTypes.join(','),
            ...(contract.apiVersion ? { API_VERSION: contract.apiVersion } : {}),
          },
        });
        outcomes.push({ name, ms: Date.now() - started });
        console.log(`ok   ${name}\n${output.trim().replace(/^/gm, '       ')}`);
      } catch (err) {
        const output = (err as { output?: string }).output ?? '';
        outcomes.push({ name, ms: Date.now() - started, failure: `${(err as Error).message}\n${output.slice(-4000)}` });
        console.log(`FAIL ${name}\n${output.slice(-4000)}`);
      }
    }
    // The proxy must have had something to change, or the later-version check saw nothing.
    const seen = later.counts();
    const blind =
      built.some((c) => c.contract.label === 'openapi.yaml') &&
      (seen.steps === 0 || seen.nodes === 0 || seen.fields === 0);
    outcomes.push({
      name: `later version: the proxy added ${seen.fields} fields and ${seen.nodes} nodes and changed ${seen.steps} steps`,
      ms: 0,
      ...(blind ? { failure: 'the proxy changed nothing of a kind: the later-version check saw nothing' } : {}),
    });
  } finally {
    await later.close();
    await live.stop();
    await provider.close();
  }
}

mkdirSync(path.join(root, 'artifacts/generators'), { recursive: true });
writeFileSync(path.join(root, 'artifacts/generators/junit.xml'), junit());
const failed = outcomes.filter((o) => o.failure).length;
console.log(`generated clients: ${outcomes.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 && outcomes.length > 0 ? 0 : 1);
