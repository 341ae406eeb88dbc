import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
  $ref?: string;
}
interface Operation {
  operationId: string;
  responses: Record<string, ResponseObject>;
}
type PathItem = Record<string, Operation>;
interface Spec {
  paths: Record<string, PathItem>;
  components: { responses: Record<string, ResponseObject> };
}

export const spec = parse(readFileSync(fileURLToPath(new URL('../openapi.yaml', import.meta.url)), 'utf8')) as Spec;

const ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: false });
addFormats.default(ajv);
ajv.addSchema(spec as object, 'openapi.yaml');

const methods = new Set(['get', 'put', 'post', 'patch', 'delete', 'head', 'options']);

export function findOperation(operationId: string): { path: string; method: string; operation: Operation } {
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (methods.has(method) && operation.operationId === operationId) return { path, method, operation };
    }
  }
  throw new Error(`openapi.yaml has no operation ${operationId}`);
}

export function allOperationIds(): string[] {
  return Object.values(spec.paths).flatMap((item) =>
    Object.entries(item)
      .filter(([m]) => methods.has(m))
      .map(([, op]) => op.operationId),
  );
}

const validators = new Map<string, ValidateFunction>();

/**
 * Checks a response against what openapi.yaml documents for its operation: the status is
 * documented, the content type is one of the documented ones, and the body matches the schema.
 * Returns the problems (empty when the response conforms).
 */
export function conformanceProblems(
  operationId: string,
  status: number,
  contentType: string | null,
  body: unknown,
): string[] {
  const { operation } = findOperation(operationId);
  let response = operation.responses[String(status)];
  if (!response) return [`status ${status} is not documented for ${operationId}`];
  if (response.$ref) response = spec.components.responses[response.$ref.split('/').pop()!]!;
  if (!response.content) return body === undefined || body === '' ? [] : [`${operationId} ${status} documents no body`];
  const mediaType = (contentType ?? '').split(';')[0]!.trim();
  const documented = response.content[mediaType];
  if (!documented) return [`content type ${mediaType || '(none)'} is not documented for ${operationId} ${status}`];
  if (!documented.schema) return [];
  const key = `${operationId} ${status} ${mediaType}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi.yaml#${pointerTo(operationId, status, mediaType)}` });
    validators.set(key, validate);
  }
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`);
}

function pointerTo(operationId: string, status: number, mediaType: string): string {
  const { path, method, operation } = findOperation(operationId);
  const response = operation.responses[String(status)]!;
  const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  if (response.$ref) {
    return `/components/responses/${esc(response.$ref.split('/').pop()!)}/content/${esc(mediaType)}/schema`;
  }
  return `/paths/${esc(path)}/${method}/responses/${status}/content/${esc(mediaType)}/schema`;
}

export interface NamedExample {
  operationId: string;
  status: string;
  mediaType: string;
  name: string;
  value: unknown;
}

/** Every named example of every documented response (with `$ref`s to components resolved). */
export function namedExamples(): NamedExample[] {
  const components = spec.components as unknown as {
    responses: Record<string, ResponseObject>;
    examples?: Record<string, { value: unknown }>;
  };
  const found: NamedExample[] = [];
  for (const item of Object.values(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!methods.has(method)) continue;
      for (const [status, ref] of Object.entries(operation.responses)) {
        const response = ref.$ref ? components.responses[ref.$ref.split('/').pop()!]! : ref;
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          const examples = (media as { examples?: Record<string, { value?: unknown; $ref?: string }> }).examples ?? {};
          for (const [name, example] of Object.entries(examples)) {
            const value = example.$ref ? components.examples![example.$ref.split('/').pop()!]!.value : example.value;
            found.push({ operationId: operation.operationId, status, mediaType, name, value });
          }
        }
      }
    }
  }
  return found;
}
