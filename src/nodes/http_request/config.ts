// What an http_request node's config says beyond its schema (openapi.yaml HttpRequestNode): where
// its templates are, and where it names the owner's secrets. A secret is written only as
// `{{ secrets.NAME }}` in the URL or a header value: the graph holds the name, the run substitutes
// the value after rendering (src/runs/httpRequest.ts), so no template, filter or body ever sees it.
import type { ProblemItem } from '../../shared/errors.ts';
import { escapePointer } from '../../shared/jsonPointer.ts';

/** `{{ secrets.NAME }}` (whitespace control allowed), the one way a secret is written. */
export const SECRET_REFERENCE = /\{\{-?\s*secrets\.([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}/g;
/** Any other mention of `secrets` inside a Liquid tag or output: a filter on it, a loop over it, a body. */
const OTHER_SECRET_USE = /\{[{%][^}]*\bsecrets\b/;

/** The largest body, as JSON text, and the most strings in it (each a template rendered per run). */
export const BODY_MAX_CHARS = 20_000;
export const BODY_MAX_STRINGS = 200;

export interface HttpRequestConfig {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  timeout_seconds?: number;
  retry?: { max_attempts?: number; backoff_seconds?: number };
  on_error?: 'fail' | 'continue';
  default?: unknown;
  output?: 'body' | 'response';
  fail_on_status?: boolean;
}

/** The headers an `output: response` keeps, and the characters of each value. */
export const RESPONSE_MAX_HEADERS = 50;
export const RESPONSE_HEADER_MAX_CHARS = 1000;

/** The schema of the output with `output: response` (what templates' field references are checked against). */
export const RESPONSE_OUTPUT = {
  type: 'object',
  required: ['status', 'headers', 'body'],
  properties: {
    status: { type: 'integer' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    body: {},
  },
};

/** The secret names a text references. */
export const secretNames = (text: string): string[] => [...text.matchAll(SECRET_REFERENCE)].map((m) => m[1]!);

/** The text with its secret references taken out (what the template analysis reads). */
export const withoutSecrets = (text: string): string => text.replace(SECRET_REFERENCE, '');

/** The body's strings with their JSON pointers (inside `/body`), in document order. */
export function bodyStrings(body: unknown, at = ''): { pointer: string; text: string }[] {
  if (typeof body === 'string') return [{ pointer: at, text: body }];
  if (Array.isArray(body)) return body.flatMap((item, i) => bodyStrings(item, `${at}/${i}`));
  if (typeof body === 'object' && body !== null)
    return Object.entries(body).flatMap(([k, v]) => bodyStrings(v, `${at}/${escapePointer(k)}`));
  return [];
}

/** The URL and header templates (secret references taken out) and the body's, each with its pointer inside config. */
export function httpRequestTemplates(config: Record<string, unknown>): { source: string; pointer: string }[] {
  const found: { source: string; pointer: string }[] = [];
  const add = (text: unknown, pointer: string, secretsAllowed: boolean) => {
    if (typeof text !== 'string') return;
    const source = secretsAllowed ? withoutSecrets(text) : text;
    if (!OTHER_SECRET_USE.test(source)) found.push({ source, pointer });
  };
  add(config.url, '/url', true);
  if (isRecord(config.headers))
    for (const [name, value] of Object.entries(config.headers)) add(value, `/headers/${escapePointer(name)}`, true);
  for (const { pointer, text } of bodyStrings(config.body)) add(text, `/body${pointer}`, false);
  return found;
}

/** What the schema cannot say: secrets only as `{{ secrets.NAME }}` in URL and headers, the body's bounds, no body on GET/HEAD. */
export function httpRequestProblems(config: Record<string, unknown>): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const misuse = (text: unknown, pointer: string, secretsAllowed: boolean) => {
    if (typeof text !== 'string' || !OTHER_SECRET_USE.test(secretsAllowed ? withoutSecrets(text) : text)) return;
    problems.push({
      pointer,
      message: secretsAllowed
        ? 'a secret is written {{ secrets.NAME }}, with no filter or tag on it'
        : 'secrets may be sent only in url and headers, as {{ secrets.NAME }}',
    });
  };
  misuse(config.url, '/url', true);
  if (isRecord(config.headers))
    for (const [name, value] of Object.entries(config.headers)) misuse(value, `/headers/${escapePointer(name)}`, true);
  const strings = bodyStrings(config.body);
  for (const { pointer, text } of strings) misuse(text, `/body${pointer}`, false);
  if (config.body !== undefined) {
    const method = typeof config.method === 'string' ? config.method : 'GET';
    if (method === 'GET' || method === 'HEAD')
      problems.push({ pointer: '/body', message: `is not sent with ${method}: use POST, PUT, PATCH or DELETE` });
    if (JSON.stringify(config.body).length > BODY_MAX_CHARS)
      problems.push({ pointer: '/body', message: `must be at most ${BODY_MAX_CHARS} characters as JSON` });
    if (strings.length > BODY_MAX_STRINGS)
      problems.push({ pointer: '/body', message: `must hold at most ${BODY_MAX_STRINGS} strings` });
  }
  return problems;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
