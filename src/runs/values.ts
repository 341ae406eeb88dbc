// A node's output is a JSON value: a string, or a number, boolean, object or list. Where
// text is needed (an llm_call's prompt without a template, a plain text_output, the run's log, the
// size caps), a value that is not a string is its JSON text.
export interface Produced {
  value: unknown;
  /** The value as text: itself when a string, else its JSON. */
  text: string;
  /** A switch's chosen case: its edges naming it (`case`) are followed. */
  route?: string;
  /** The node failed and sends its error down its `case: error` edges only (nodes/errorRoutes.ts). */
  failed?: boolean;
}

export const toText = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');

export const produced = (value: unknown): Produced => ({ value, text: toText(value) });

/**
 * A text_output's value: its upstream outputs as text joined by a newline (`plain`) or a blank
 * line (`markdown`); for `json`, the one upstream value when it is not a string, else the joined
 * text parsed (kept as a string when it is not JSON).
 */
export function formatOutput(format: 'plain' | 'markdown' | 'json', before: readonly Produced[]): unknown {
  if (format === 'json' && before.length === 1 && typeof before[0]!.value !== 'string') return before[0]!.value;
  const text = before.map((p) => p.text).join(format === 'markdown' ? '\n\n' : '\n');
  if (format !== 'json') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // not JSON: kept as a JSON string, never lost
  }
}

const JSON_TYPES: Record<string, (value: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  array: (v) => Array.isArray(v),
};

/** Whether a run input is of the type its text_input declares (`string` when it declares none). */
export const isOfType = (value: unknown, type: string | undefined): boolean =>
  (JSON_TYPES[type ?? 'string'] ?? (() => false))(value);

/** Key order never matters to JSON values: two inputs are the same when this is. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
