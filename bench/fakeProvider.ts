// The model provider of the engine rows (bench/rows/engineCost.ts): test/support/fakeOpenAI.ts,
// speaking OpenAI's wire format, in a process of its own (it never shares an event loop with the
// service or the load generator; its CPU shows in the usage table's "rest"). Two models:
//   - SLOW_MODEL answers an upper-cased echo after PROVIDER_DELAY_MS, as a remote model would;
//   - TOOLS_MODEL asks for one tool call (TOOL_NAME, {"q": "<n>"}) per answer until the
//     conversation holds AGENT_TOOL_CALLS tool results, then answers: an agent of that many calls.
//
//   sh scripts/node.sh bench/fakeProvider.ts      (prints its base URL on stdout, then serves)
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAI, type FakeReply } from '../test/support/fakeOpenAI.ts';
import { spawnNode } from './processes.ts';

export const SLOW_MODEL = 'slow-200ms';
export const TOOLS_MODEL = 'tools-10';
export const PROVIDER_DELAY_MS = 200;
export const AGENT_TOOL_CALLS = 10;
export const TOOL_NAME = 'lookup';

/** The service's settings that route the two models to the provider at `baseUrl`. */
export function providerEnv(baseUrl: string): NodeJS.ProcessEnv {
  return { MODEL_PROVIDER_BASE_URL: baseUrl, MODEL_PROVIDER_MODELS: `${SLOW_MODEL},${TOOLS_MODEL}` };
}

/** Starts the provider's process (stopped by cleanUp()); its base URL. */
export async function startFakeProvider(): Promise<string> {
  const child = spawnNode([fileURLToPath(import.meta.url)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  while (!out.includes('\n')) {
    const exited = once(child, 'exit').then(() => 'exit' as const);
    if ((await Promise.race([once(child.stdout!, 'data').then(() => 'data' as const), exited])) === 'exit')
      throw new Error('the fake provider exited before it listened');
  }
  return out.split('\n')[0]!.trim();
}

function reply(body: { model: string; messages: { role: string }[] }): FakeReply {
  if (body.model !== TOOLS_MODEL) return { kind: 'completion', content: 'ANSWERED.', delayMs: PROVIDER_DELAY_MS };
  const done = body.messages.filter((m) => m.role === 'tool').length;
  if (done >= AGENT_TOOL_CALLS) return { kind: 'completion', content: `done after ${done} tool calls` };
  return {
    kind: 'tool-calls',
    calls: [{ id: `call_${done + 1}`, name: TOOL_NAME, arguments: JSON.stringify({ q: String(done + 1) }) }],
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fake = await startFakeOpenAI();
  fake.answer = reply;
  // The fake keeps every request for tests to read; here nobody does.
  setInterval(() => (fake.requests.length = 0), 1000).unref();
  process.stdout.write(`${fake.baseUrl}\n`);
}
