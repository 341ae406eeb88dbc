// The load generator, run as its own process by bench/run.ts so that it never shares an event loop
// with the service or the orchestrator:
//
//   sh scripts/node.sh bench/load.ts SPEC.json      (prints one JSON LoadResult on stdout)
//
// Fixed requests go through autocannon (or the small generator below, for latencies under a
// millisecond). Loads where each request depends on the previous answer (refresh chains,
// single-use codes, runs polled to completion) use the small generator: `connections` loops over
// keep-alive sockets, each with one request in flight.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { importJWK, SignJWT, type JWK } from 'jose';
import { accessTokenHash } from '../src/http/dpop.ts';
import { percentile, sender, type Reply } from './httpClient.ts';
import { scale } from './scaleLoad.ts';
import type { LoadResult, LoadSpec } from './types.ts';

function client(baseUrl: string, connections: number) {
  const send = sender(new http.Agent({ keepAlive: true, maxSockets: connections }));
  return (method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> =>
    send(baseUrl, method, path, headers, body);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What one step of a chain came to: 'ok' or 'error' (counted, the chain goes on), 'error-end' (counted,
 * and this chain alone stops: the others keep going), or 'exhausted' (the shared input ran out, so every
 * chain stops).
 */
type Outcome = 'ok' | 'error' | 'error-end' | 'exhausted';

/** Runs `loops` chains until `durationMs` passes; each step returns what it came to. */
async function runChains(
  loops: number,
  durationMs: number,
  step: (loop: number) => Promise<Outcome>,
): Promise<{ latencies: number[]; errors: number; elapsedMs: number; exhausted: boolean }> {
  const latencies: number[] = [];
  let errors = 0;
  let exhausted = false;
  const start = performance.now();
  const end = start + durationMs;
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      while (performance.now() < end && !exhausted) {
        const t0 = performance.now();
        let outcome: Outcome;
        try {
          outcome = await step(loop);
        } catch {
          outcome = 'error';
        }
        if (outcome === 'exhausted') {
          exhausted = true;
          break;
        }
        latencies.push(performance.now() - t0);
        if (outcome === 'error' || outcome === 'error-end') errors += 1;
        if (outcome === 'error-end') break;
      }
    }),
  );
  return { latencies, errors, elapsedMs: performance.now() - start, exhausted };
}

function summarize(
  r: { latencies: number[]; errors: number; elapsedMs: number },
  extra: Partial<LoadResult> = {},
): LoadResult {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    rps: sorted.length / (r.elapsedMs / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors: r.errors,
    seconds: r.elapsedMs / 1000,
    ...extra,
  };
}

async function fixed(spec: Extract<LoadSpec, { kind: 'fixed' }>): Promise<LoadResult> {
  if (spec.subMillisecond) return fixedTimed(spec);
  const result = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    connections: spec.connections,
    duration: spec.durationSeconds,
  });
  const failures = result.errors + result.timeouts + result.non2xx;
  return {
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: failures,
    seconds: result.duration,
  };
}

/** The same request in `connections` loops, each latency to the microsecond; a non-2xx is an error. */
async function fixedTimed(spec: Extract<LoadSpec, { kind: 'fixed' }>): Promise<LoadResult> {
  const url = new URL(spec.url);
  const send = client(url.origin, spec.connections);
  const r = await runChains(spec.connections, spec.durationSeconds * 1000, async () => {
    const reply = await send(spec.method, url.pathname + url.search, spec.headers, spec.body);
    return reply.status >= 200 && reply.status < 300 ? 'ok' : 'error';
  });
  return summarize(r);
}

async function refresh(spec: Extract<LoadSpec, { kind: 'refresh' }>): Promise<LoadResult> {
  const send = client(spec.url, spec.connections);
  const path = new URL(spec.url).pathname;
  const tokens = [...spec.refreshTokens];
  const headers = {
    authorization: spec.authorization,
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (tokens.length < spec.connections)
    throw new Error(`refresh load: ${tokens.length} refresh tokens for ${spec.connections} chains`);
  let broken = 0;
  const r = await runChains(spec.connections, spec.durationSeconds * 1000, async (loop) => {
    const token = tokens[loop]!;
    const reply = await send(
      'POST',
      path,
      headers,
      new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
    );
    if (reply.status !== 200) {
      // A chain whose token was refused cannot go on: that is an error and the end of this chain only;
      // the other chains keep their tokens and run for the whole duration.
      broken += 1;
      return 'error-end';
    }
    tokens[loop] = (JSON.parse(reply.body) as { refresh_token: string }).refresh_token;
    return 'ok';
  });
  return summarize(r, {
    note: broken ? `${broken} of ${spec.connections} chains broke (refused token), the rest ran on` : undefined,
  });
}

/**
 * GET with a DPoP-bound token: every request signs its own proof (a new jti, this URL, `ath`), as a
 * client must; the signing (ES256, in this process) is part of each latency, as it is a client's.
 */
async function dpop(spec: Extract<LoadSpec, { kind: 'dpop' }>): Promise<LoadResult> {
  const url = new URL(spec.url);
  const send = client(url.origin, spec.connections);
  const key = await importJWK(spec.privateJwk as JWK, 'ES256');
  const ath = accessTokenHash(spec.accessToken);
  const authorization = `DPoP ${spec.accessToken}`;
  const r = await runChains(spec.connections, spec.durationSeconds * 1000, async () => {
    const proof = await new SignJWT({ htm: 'GET', htu: spec.url, jti: randomUUID(), ath })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: spec.publicJwk as JWK })
      .setIssuedAt()
      .sign(key);
    const reply = await send('GET', url.pathname, { authorization, dpop: proof });
    return reply.status === 200 ? 'ok' : 'error';
  });
  return summarize(r);
}

async function codes(spec: Extract<LoadSpec, { kind: 'codes' }>): Promise<LoadResult> {
  const send = client(spec.url, spec.connections);
  const path = new URL(spec.url).pathname;
  const headers = {
    authorization: spec.authorization,
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  let next = 0;
  const r = await runChains(spec.connections, spec.durationSeconds * 1000, async () => {
    const code = spec.codes[next++];
    if (code === undefined) return 'exhausted';
    const reply = await send(
      'POST',
      path,
      headers,
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: spec.redirectUri,
        ...(spec.codeVerifier ? { code_verifier: spec.codeVerifier } : {}),
      }).toString(),
    );
    return reply.status === 200 ? 'ok' : 'error';
  });
  return summarize(r, {
    note: r.exhausted ? `all ${spec.codes.length} codes used in ${r.elapsedMs.toFixed(0)} ms` : undefined,
  });
}

/**
 * Runs of one workflow, POST .../run to `completed`, as one of two clients sees them: one that polls
 * GET every `pollMs`, or (with `waitSeconds`) one that asks the POST to wait for the end (`Prefer:
 * wait`, answered 200 with the ended run) and, if it is still running after the wait, GETs it with
 * the same preference.
 */
async function runs(spec: Extract<LoadSpec, { kind: 'runs' }>): Promise<LoadResult> {
  const send = client(spec.baseUrl, spec.connections);
  const headers = {
    authorization: `Bearer ${spec.apiKey}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  const waiting = spec.waitSeconds === undefined ? headers : { ...headers, prefer: `wait=${spec.waitSeconds}` };
  const body = JSON.stringify({ inputs: spec.inputs });
  const statusOf = (reply: Reply) => (JSON.parse(reply.body) as { data: { id: string; status: string } }).data;
  const outcome = (status: string): Outcome | undefined =>
    status === 'completed' ? 'ok' : status === 'failed' || status === 'cancelled' ? 'error' : undefined;
  let gets = 0;
  const r = await runChains(spec.connections, spec.durationSeconds * 1000, async () => {
    const started = await send('POST', `/api/workflows/${spec.workflowId}/run`, waiting, body);
    if (started.status !== 202 && !(started.status === 200 && spec.waitSeconds !== undefined)) return 'error';
    const run = statusOf(started);
    let ended = outcome(run.status);
    while (ended === undefined) {
      if (spec.waitSeconds === undefined) await sleep(spec.pollMs);
      gets += 1;
      const reply = await send('GET', `/api/workflows/${spec.workflowId}/runs/${run.id}`, waiting);
      if (reply.status !== 200) return 'error';
      ended = outcome(statusOf(reply).status);
    }
    return ended;
  });
  const perRun = (gets / Math.max(1, r.latencies.length)).toFixed(1);
  return summarize(r, {
    note:
      spec.waitSeconds === undefined
        ? `polled every ${spec.pollMs} ms, ${perRun} polls per run`
        : `Prefer: wait=${spec.waitSeconds} on the POST, ${perRun} GETs per run`,
  });
}

/** Row 9's peer: a webhook whose answer is its workflow's last node (n8n's Respond to Webhook). */
async function webhook(spec: Extract<LoadSpec, { kind: 'webhook' }>): Promise<LoadResult> {
  const send = client(spec.url, spec.connections);
  const path = new URL(spec.url).pathname;
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const r = await runChains(spec.connections, spec.durationSeconds * 1000, async () => {
    const reply = await send('POST', path, headers, spec.body);
    return reply.status === 200 && reply.body.includes(spec.expect) ? 'ok' : 'error';
  });
  return summarize(r);
}

const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadSpec;
const result =
  spec.kind === 'fixed'
    ? await fixed(spec)
    : spec.kind === 'refresh'
      ? await refresh(spec)
      : spec.kind === 'dpop'
        ? await dpop(spec)
        : spec.kind === 'codes'
          ? await codes(spec)
          : spec.kind === 'webhook'
            ? await webhook(spec)
            : spec.kind === 'scale'
              ? await scale(spec)
              : await runs(spec);
process.stdout.write(JSON.stringify(result) + '\n');
process.exit(0);
