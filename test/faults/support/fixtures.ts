// Fixtures for the fault tests, made through the same service functions the admin CLI uses.
import type { Knex } from 'knex';
import { createAccessToken } from '../../../src/accounts/accessTokens.ts';
import { createUser } from '../../../src/accounts/users.ts';
import { seedGraph } from '../../support/seedWorkflow.ts';

export { seedGraph };

let counter = 0;

/** A new user and an API key with the `workflows` permission. */
export async function apiKeyFor(db: Knex, prefix = 'fault'): Promise<{ userId: number; login: string; token: string }> {
  counter += 1;
  const login = `${prefix}${counter}x${Math.floor(Math.random() * 1e6)}`;
  const user = await createUser({ db }, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(
    { db },
    { userId: user.id, namespace: login, name: 'faults', usageScenario: 'paid', permissions: ['workflows'] },
  );
  return { userId: user.id, login, token };
}

/** The seed's example graph: text_input -> llm_call(model) -> text_output. */

export function bearer(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${token}`, ...extra };
}

export async function createWorkflow(baseUrl: string, apiKey: string, model: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/workflows`, {
    method: 'POST',
    headers: bearer(apiKey, { 'content-type': 'application/json' }),
    body: JSON.stringify({ name: `wf ${model}`, ...seedGraph(model) }),
  });
  const body = (await res.json()) as { data?: { id: string } };
  if (res.status !== 201 || !body.data) throw new Error(`create workflow: ${res.status} ${JSON.stringify(body)}`);
  return body.data.id;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `probe` until it returns true, at most `timeoutMs`; returns how long it took. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(200);
  }
}
