// Every operation documents, in openapi.yaml, exactly the problem codes it can answer with: each
// code under the response of its status (an example of that response names it), and no code it
// never sends.
//
// What "can answer" means here is derived from the source, not written down a second time:
// problemMap.ts follows, with the TypeScript compiler, every function the operation's handler, its
// security schemes' handlers and the middleware mounted on its path can reach, and collects the
// codes of the `new Problem(...)` they make (and database_unavailable where they use the store).
// We chose this over the alternatives:
// - provoking every code through the real server would need an outage, a full quota, a lost race
//   ... for each of ~40 operations: hundreds of slow scenarios, most of them already in the
//   domain suites, and a code nobody thought to provoke would go unnoticed;
// - a registry of each operation's codes in the code would be one more list to keep right by
//   hand: a handler could still throw a code its entry forgets.
// The static map errs on the side of "can": a path the code has but no request takes in practice
// still counts (a run read back after `Prefer: wait` can be gone: run_not_found). It cannot see
// through a callback stored in a variable of a non-function type or a dynamic import; the error
// constructors are plain functions called by name, so none of our code does that.
//
// Some codes do not belong to an operation and are not compared: those answered before any
// operation is matched or for any request (route_not_found, method_not_allowed, the 431 of the
// HTTP server), a bug (internal_error), the response validator's 406 (tests and dev only), and
// unstorable_text (the database refusing a NUL the contract's patterns let through: a safety
// net that the patterns are meant to make unreachable). The request validator's refusals are
// rules of express-openapi-validator rather than code of ours: every operation can answer
// invalid_request (an unknown query parameter is refused), and one with a body
// payload_too_large and unsupported_media_type.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROBLEM_CODES, type ProblemCode } from '../../src/shared/errors.ts';
import { oauthErrors } from '../../src/oauth/router.ts';
import { serverlessErrors } from '../../src/serverless/router.ts';
import { problemSources, type ProblemSources } from './problemMap.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Example {
  value?: { code?: string; status?: number };
  $ref?: string;
}
interface MediaType {
  examples?: Record<string, Example>;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, MediaType>;
}
interface Operation {
  operationId: string;
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses: Record<string, ResponseObject>;
}
interface Spec {
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, ResponseObject>; examples: Record<string, Example> };
}

const spec = parse(readFileSync(`${root}openapi.yaml`, 'utf8')) as Spec;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Not any one operation's (see the header). */
const NOT_PER_OPERATION = new Set<string>([
  'route_not_found',
  'method_not_allowed',
  'request_header_fields_too_large',
  'internal_error',
  'not_acceptable',
  'unstorable_text',
]);

/**
 * Where the map says "can" but the code catches it on the way: the readiness probe answers a store
 * outage with its own 503 (a Health body, src/http/health.ts), never a problem.
 */
const CAUGHT: Record<string, string[]> = { getReadiness: ['database_unavailable'] };

const local = (ref: string) => ref.split('/').pop()!;
const responseOf = (r: ResponseObject) => (r.$ref ? spec.components.responses[local(r.$ref)]! : r);
const exampleOf = (e: Example) => (e.$ref ? spec.components.examples[local(e.$ref)]! : e);

/** The problem codes an operation documents, by the status they are documented under. */
function documented(operation: Operation): { status: string; code: string }[] {
  return Object.entries(operation.responses).flatMap(([status, response]) =>
    Object.values(responseOf(response).content?.['application/problem+json']?.examples ?? {}).map((e) => ({
      status,
      code: String(exampleOf(e).value?.code),
    })),
  );
}

/** Errors of these paths are not problems (RFC 6749 JSON, OpenAI's shape, pages). */
const otherDialect = (path: string) =>
  [...oauthErrors, serverlessErrors].some((s) => s.paths.test(path.replace(/\{[^}]+\}/g, 'x')));

function operations(): { path: string; operation: Operation }[] {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ path, operation: item[m]! })),
  );
}

/** The problem codes the source says the operation can answer with. */
function sent(sources: ProblemSources, path: string, operation: Operation): string[] {
  const codes = new Set<string>(['invalid_request']);
  if (operation.requestBody) for (const c of ['payload_too_large', 'unsupported_media_type']) codes.add(c);
  const handler = sources.handlers.get(operation.operationId);
  if (!handler) throw new Error(`no handler found for ${operation.operationId}`);
  for (const c of handler) codes.add(c);
  for (const requirement of operation.security ?? spec.security ?? []) {
    for (const scheme of Object.keys(requirement)) {
      const schemeCodes = sources.schemes.get(scheme);
      if (!schemeCodes) throw new Error(`no security handler found for ${scheme}`);
      for (const c of schemeCodes) codes.add(c);
    }
  }
  for (const [prefix, prefixCodes] of sources.prefixes)
    if (path === prefix || path.startsWith(`${prefix}/`)) for (const c of prefixCodes) codes.add(c);
  for (const c of CAUGHT[operation.operationId] ?? []) codes.delete(c);
  return [...codes].filter((c) => !NOT_PER_OPERATION.has(c)).sort();
}

describe('problem codes per operation (the source against openapi.yaml)', () => {
  let sources: ProblemSources;
  beforeAll(() => {
    sources = problemSources(root);
  }, 60_000);

  it('finds a handler for every operation, and codes of the catalogue only', () => {
    for (const { operation } of operations())
      expect(sources.handlers.has(operation.operationId), operation.operationId).toBe(true);
    const all = [...sources.handlers.values(), ...sources.schemes.values(), ...sources.prefixes.values()].flatMap(
      (s) => [...s],
    );
    for (const code of all) expect(Object.keys(PROBLEM_CODES)).toContain(code);
    // The map is not blind: the codes this test exists for are found where they are thrown.
    expect([...sources.handlers.get('runWorkflow')!]).toEqual(
      expect.arrayContaining(['too_many_concurrent_runs', 'too_many_runs_per_minute', 'idempotency_key_reused']),
    );
    expect([...sources.handlers.get('createWorkflow')!]).not.toContain('too_many_concurrent_runs');
  });

  it('documents each code under the response of its status', () => {
    for (const { operation } of operations()) {
      for (const { status, code } of documented(operation)) {
        expect({ operation: operation.operationId, code, status: String(PROBLEM_CODES[code as ProblemCode]) }).toEqual({
          operation: operation.operationId,
          code,
          status,
        });
      }
    }
  });

  it('documents on each operation exactly the problem codes it can answer with', () => {
    const mismatches: string[] = [];
    for (const { path, operation } of operations()) {
      const listed = [...new Set(documented(operation).map((d) => d.code))]
        .filter((c) => !NOT_PER_OPERATION.has(c))
        .sort();
      const expected = otherDialect(path) ? [] : sent(sources, path, operation);
      const missing = expected.filter((c) => !listed.includes(c));
      const extra = listed.filter((c) => !expected.includes(c));
      if (missing.length || extra.length)
        mismatches.push(
          `${operation.operationId}: ${missing.length ? `sends but does not document ${missing.join(', ')}` : ''}${missing.length && extra.length ? '; ' : ''}${extra.length ? `documents but never sends ${extra.join(', ')}` : ''}`,
        );
    }
    expect(mismatches).toEqual([]);
  });
});
