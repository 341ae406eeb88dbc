// The config of each node type, checked against its schema in openapi.yaml (TextInputNode.config,
// LlmCallNode.config, ...: each type's `schema` in nodes/registry.ts) compiled with Ajv, so the
// contract is the one source of these rules.
// Problems come out in the words the 422s use (`must be a string`, `must be 1 to 20000
// characters`), one per field, in the order of the fields (a type's `readLast` fields after the
// others). What a schema cannot say about a field stays here: a blank `model`, and `max_tokens`
// held to the configured limit; what it cannot say about a type is that type's `configProblems`.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import type { ProblemItem } from '../shared/errors.ts';
import { NODE_REGISTRY, nodeDefinition, type NodeType } from '../nodes/registry.ts';

export { NODE_TYPES, type NodeType } from '../nodes/registry.ts';

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  components: { schemas: Record<string, { properties: { config: Schema } }> };
};
/**
 * A `$ref` inside a config is a graph of its own (a map's `body`): accepted here as any value, and
 * checked node by node by graph.ts, whose problems point into it.
 */
function withoutRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutRefs);
  if (typeof schema !== 'object' || schema === null) return schema;
  if ('$ref' in schema) return {};
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, withoutRefs(v)]));
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
const configs = Object.fromEntries(
  NODE_REGISTRY.map(({ type, schema: name }) => {
    const schema = withoutRefs(spec.components.schemas[name]!.properties.config) as Schema;
    return [type, { schema, validate: ajv.compile(schema) }];
  }),
) as Record<NodeType, { schema: Schema; validate: ReturnType<typeof ajv.compile> }>;

/** Where the plain wording of a keyword is not the 422's: by the field's pointer inside config. */
const WORDING: Record<string, (schema: Schema, keyword: string) => string | undefined> = {
  '/variable': (s, keyword) =>
    keyword === 'type'
      ? undefined
      : `must be an identifier (letters, digits, "_", not starting with a digit; at most ${s.maxLength} characters)`,
  // Blank is a problem of its own (below): past the length, only the upper bound is news.
  '/model': (s, keyword) => (keyword === 'maxLength' ? `must be at most ${s.maxLength} characters` : undefined),
  '/retry': () => 'must be an object with max_attempts and/or backoff_seconds',
  '/retry/max_attempts': (s) => `must be an integer from ${s.minimum} to ${s.maximum}`,
  '/retry/backoff_seconds': (s) => `must be a number from ${s.minimum} to ${s.maximum}`,
  '/timeout_seconds': (s) => `must be a number above ${s.exclusiveMinimum} and at most ${s.maximum}`,
};

const A_TYPE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  object: 'an object',
  boolean: 'a boolean',
  array: 'an array',
};

function wording(path: string, error: ErrorObject, schema: Schema): string {
  if (schema.enum) return `must be one of ${schema.enum.join(', ')}`;
  const special = WORDING[path]?.(schema, error.keyword);
  if (special) return special;
  switch (error.keyword) {
    case 'type':
      return `must be ${A_TYPE[String(error.params.type)] ?? String(error.params.type)}`;
    case 'minLength':
    case 'maxLength':
      if (schema.minLength !== undefined && schema.maxLength !== undefined)
        return `must be ${schema.minLength} to ${schema.maxLength} characters`;
      return schema.maxLength !== undefined
        ? `must be at most ${schema.maxLength} characters`
        : `must be at least ${schema.minLength} characters`;
    case 'minimum':
      return `must be >= ${schema.minimum}`;
    case 'maximum':
      return `must be <= ${schema.maximum}`;
    case 'exclusiveMinimum':
      return `must be > ${schema.exclusiveMinimum}`;
    default:
      return 'is invalid';
  }
}

import { escapePointer } from '../shared/jsonPointer.ts';

export { escapePointer };

const schemaAt = (root: Schema, path: string): Schema =>
  path
    .split('/')
    .slice(1)
    .reduce<Schema>((s, key) => s.properties?.[key.replace(/~1/g, '/').replace(/~0/g, '~')] ?? {}, root);

/** The value a JSON pointer names inside `root` (`/cases/0` is the first case), or undefined. */
const valueAt = (root: unknown, path: string): unknown =>
  path
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (v, key) =>
        typeof v === 'object' && v !== null
          ? (v as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')]
          : undefined,
      root,
    );

/**
 * The problems of one node's config (an object, of a known type), as pointers inside the config
 * (`/model`, `/retry/max_attempts`). `maxTokens`: the configured limit of a `max_tokens` field.
 */
export function configProblems(type: NodeType, config: Record<string, unknown>, maxTokens: number): ProblemItem[] {
  const { schema, validate } = configs[type];
  validate(config);
  const found: { pointer: string; message: string; rank: number[] }[] = [];
  const fields = Object.keys(schema.properties ?? {});
  const last = nodeDefinition(type).readLast ?? [];
  fields.sort((a, b) => Number(last.includes(a)) - Number(last.includes(b)));
  const rankOf = (path: string): number[] => {
    const [field, ...rest] = path.split('/').slice(1);
    const parent = schema.properties?.[field!] ?? {};
    return [
      2,
      fields.indexOf(field!),
      ...(rest.length ? [1, Object.keys(parent.properties ?? {}).indexOf(rest[0]!)] : [0]),
    ];
  };
  const seen = new Set<string>();
  const blankModel =
    'model' in (schema.properties ?? {}) && typeof config.model === 'string' && config.model.trim() === '';
  for (const error of validate.errors ?? []) {
    const path = error.instancePath;
    if (error.keyword === 'additionalProperties') {
      const key = String(error.params.additionalProperty);
      const owner = valueAt(config, path);
      const keys = typeof owner === 'object' && owner !== null ? Object.keys(owner) : [];
      const rank = path === '' ? [0, keys.indexOf(key)] : [...rankOf(path).slice(0, 2), 0.5, keys.indexOf(key)];
      found.push({ pointer: `${path}/${escapePointer(key)}`, message: `unknown property "${key}"`, rank });
    } else if (error.keyword === 'required') {
      const key = String(error.params.missingProperty);
      found.push({
        pointer: `${path}/${escapePointer(key)}`,
        message: `is required for a ${type} node`,
        rank: [1, schema.required?.indexOf(key) ?? 0],
      });
    } else if (
      !seen.has(path) &&
      !(path === '/model' && blankModel) &&
      !(path === '/max_tokens' && error.keyword === 'maximum')
    ) {
      seen.add(path);
      found.push({ pointer: path, message: wording(path, error, schemaAt(schema, path)), rank: rankOf(path) });
    }
  }
  if (blankModel) found.push({ pointer: '/model', message: 'must not be empty', rank: rankOf('/model') });
  // The configured limit, never above the contract's own maximum.
  const tokens = config.max_tokens;
  const limit = Math.min(maxTokens, schemaAt(schema, '/max_tokens').maximum ?? Infinity);
  const limited = 'max_tokens' in (schema.properties ?? {});
  if (limited && !seen.has('/max_tokens') && typeof tokens === 'number' && tokens > limit) {
    found.push({ pointer: '/max_tokens', message: `must be <= ${limit}`, rank: rankOf('/max_tokens') });
  }
  const compare = (a: number[], b: number[]): number => {
    for (let i = 0; i < Math.max(a.length, b.length); i++)
      if ((a[i] ?? -1) !== (b[i] ?? -1)) return (a[i] ?? -1) - (b[i] ?? -1);
    return 0;
  };
  return found.sort((a, b) => compare(a.rank, b.rank)).map(({ pointer, message }) => ({ pointer, message }));
}
