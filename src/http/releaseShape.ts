// Shapes an answer to an older release's response schema (apiVersions.ts): a client generated
// from that release may refuse any field or node type it did not know.
// - Objects keep the properties the release's schema lists (free-form maps are data: kept whole).
// - What a client sends back as it read it (ROUND_TRIP: a workflow's nodes and edges) is never
//   trimmed, since a trimmed graph saved again would lose what the release could not show: it is
//   shown whole when the release's schema holds it, else it is Unrepresentable.
// - A page (`data` at the top) leaves out an item that is Unrepresentable; elsewhere the whole
//   answer is (a 406).

type Schema = Record<string, unknown>;
export interface Release {
  info: { version: string };
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, Schema> }>>;
  components: { schemas: Record<string, Schema>; responses?: Record<string, Schema> };
}

export class Unrepresentable extends Error {}

const ROUND_TRIP = new Set(['WorkflowNode', 'WorkflowEdge']);

const refName = (schema: Schema) => (typeof schema.$ref === 'string' ? schema.$ref.split('/').at(-1)! : undefined);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolve(release: Release, schema: Schema): Schema {
  let s = schema;
  for (let name = refName(s); name; name = refName(s))
    s = release.components.schemas[name] ?? release.components.responses?.[name] ?? {};
  return s;
}

/** Each operation's responses in a release, by operationId: indexed once per release, not per answer. */
const operationsOf = new WeakMap<Release, Map<string, Record<string, Schema>>>();
function responsesOf(release: Release, operationId: string): Record<string, Schema> | undefined {
  let index = operationsOf.get(release);
  if (!index) {
    index = new Map();
    for (const item of Object.values(release.paths)) {
      for (const operation of Object.values(item))
        if (operation?.operationId) index.set(operation.operationId, operation.responses ?? {});
    }
    operationsOf.set(release, index);
  }
  return index.get(operationId);
}

/** The schema of an operation's JSON answer with this status in the release, if it has one. */
function responseSchema(release: Release, operationId: string, status: number): Schema | undefined {
  const responses = responsesOf(release, operationId);
  const answer = responses?.[String(status)] ?? responses?.[`${String(status)[0]}XX`];
  if (!answer) return undefined;
  const content = resolve(release, answer).content as Record<string, { schema?: Schema }> | undefined;
  return content?.['application/json']?.schema;
}

const jsonType = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v;
function fits(release: Release, schema: Schema, value: unknown): boolean {
  const s = resolve(release, schema);
  const types = [s.type ?? []].flat() as string[];
  const t = jsonType(value);
  if (types.length && !types.includes(t) && !(t === 'number' && types.includes('integer'))) return false;
  if (s.const !== undefined && s.const !== value) return false;
  if (isObject(value) && Array.isArray(s.required)) return s.required.every((k) => Object.hasOwn(value, k as string));
  return true;
}

/** The branch of a oneOf/anyOf that this value is: by the discriminator, else the first that fits. */
function branch(release: Release, s: Schema, value: unknown): Schema | undefined {
  const options = (s.oneOf ?? s.anyOf) as Schema[];
  const discriminator = s.discriminator as { propertyName: string; mapping?: Record<string, string> } | undefined;
  if (discriminator && isObject(value)) {
    const target = discriminator.mapping?.[String(value[discriminator.propertyName])];
    if (!target)
      throw new Unrepresentable(
        `${discriminator.propertyName} ${JSON.stringify(value[discriminator.propertyName])} is not one it has`,
      );
    return { $ref: target };
  }
  return options.find((o) => fits(release, o, value));
}

/** Every property the object schema (and its allOf parts) lists, and whether it takes others. */
function objectShape(release: Release, s: Schema): { properties: Record<string, Schema>; open: boolean } {
  const parts = [s, ...((s.allOf as Schema[] | undefined) ?? []).map((p) => resolve(release, p))];
  const properties = Object.assign(
    {},
    ...parts.map((p) => (p.properties as Record<string, Schema> | undefined) ?? {}),
  ) as Record<string, Schema>;
  const free =
    parts.every((p) => !p.properties) ||
    parts.some((p) => p.additionalProperties === true || isObject(p.additionalProperties));
  return { properties, open: free };
}

function shape(release: Release, schema: Schema, value: unknown, whole: boolean, page: boolean): unknown {
  const name = refName(schema);
  const exact = whole || (name !== undefined && ROUND_TRIP.has(name));
  const s = resolve(release, schema);
  if (s.oneOf || s.anyOf) {
    const chosen = branch(release, s, value);
    if (!chosen) {
      if (exact) throw new Unrepresentable(`a value of ${name ?? 'a field'} is not one it has`);
      return value;
    }
    return shape(release, chosen, value, exact, page);
  }
  if (exact && Array.isArray(s.enum) && !s.enum.includes(value))
    throw new Unrepresentable(`${JSON.stringify(value)} is not a value it has`);
  if (exact && s.const !== undefined && s.const !== value)
    throw new Unrepresentable(`${JSON.stringify(value)} is not a value it has`);
  if (Array.isArray(value)) {
    const items = (s.items as Schema | undefined) ?? {};
    if (!page) return value.map((v) => shape(release, items, v, exact, false));
    return value.flatMap((v) => {
      try {
        return [shape(release, items, v, exact, false)];
      } catch (err) {
        if (err instanceof Unrepresentable) return [];
        throw err;
      }
    });
  }
  if (!isObject(value)) return value;
  const { properties, open } = objectShape(release, s);
  if (open && !exact) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const property = properties[key];
    if (property) out[key] = shape(release, property, v, exact, page && key === 'data' && Array.isArray(v));
    else if (open) out[key] = v;
    else if (exact) throw new Unrepresentable(`\`${key}\` is a field it does not have`);
  }
  return out;
}

/** `body` as the release's schema for this operation and status has it (as it is when it has none). */
export function shapeToRelease(release: Release, operationId: string, status: number, body: unknown): unknown {
  const schema = responseSchema(release, operationId, status);
  return schema ? shape(release, schema, body, false, true) : body;
}
