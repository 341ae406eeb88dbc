// The operator's price table (MODEL_PRICES or MODEL_PRICES_FILE, read by src/config.ts) and what a
// model call's tokens cost at it. Prices are kept and costs computed as integers (billionths of the
// table's currency, "nanos"; prices as nanos per million tokens, in BigInt while multiplying), so a
// run's cost, summed over its steps, never drifts the way floats do. One currency per table: a
// table mixing them is refused at start, as sums across currencies mean nothing.

/** One model's prices, in nanos of the table's currency per million tokens. */
export interface ModelPrice {
  input: bigint;
  output: bigint;
  cachedInput: bigint;
}

export interface PriceTable {
  /** ISO 4217 code of every price in the table. */
  currency: string;
  models: ReadonlyMap<string, ModelPrice>;
}

/** A cost in nanos (billionths) of `currency`: `input` (cached input included) and `output`; total = input + output. */
export interface CostNanos {
  currency: string;
  input: number;
  output: number;
}

/** The tokens a cost is computed from (the contract's Usage). */
export interface PricedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

const NANOS = 1_000_000_000;
/** The highest price per million tokens a table may give (a typo's guard, far above any real one). */
const MAX_PRICE = 1_000_000;

/** A price per million tokens in nanos, exactly: at most 9 decimals (finer is refused, not rounded). */
function priceNanos(value: unknown, where: string, problems: string[]): bigint {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_PRICE) {
    problems.push(`${where}: must be a number from 0 to ${MAX_PRICE} (price per million tokens)`);
    return 0n;
  }
  const fixed = value.toFixed(9);
  if (Number(fixed) !== value) {
    problems.push(`${where}: at most 9 decimals (got ${value})`);
    return 0n;
  }
  const [units, decimals = ''] = fixed.split('.');
  return BigInt(units!) * BigInt(NANOS) + BigInt(decimals.padEnd(9, '0'));
}

/**
 * Reads a price table's JSON: `{ "<model>": { "input": 2.5, "output": 10, "cached_input": 1.25,
 * "currency": "USD" }, ... }`, prices per million tokens; `cached_input` defaults to `input`,
 * `currency` to USD, and every model's must be the same. Answers the table, or every problem.
 */
export function parsePriceTable(text: string): { table: PriceTable } | { problems: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { problems: [`not JSON (${(err as Error).message})`] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { problems: ['must be a JSON object of model name -> { input, output, cached_input, currency }'] };
  const problems: string[] = [];
  const models = new Map<string, ModelPrice>();
  const currencies = new Set<string>();
  for (const [model, entry] of Object.entries(parsed)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`"${model}": must be an object { input, output, cached_input, currency }`);
      continue;
    }
    const e = entry as Record<string, unknown>;
    const unknownKeys = Object.keys(e).filter((k) => !['input', 'output', 'cached_input', 'currency'].includes(k));
    if (unknownKeys.length) problems.push(`"${model}": unknown field ${unknownKeys.map((k) => `"${k}"`).join(', ')}`);
    const currency = e.currency ?? 'USD';
    if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
      problems.push(`"${model}".currency: must be an ISO 4217 code such as "USD" (got ${JSON.stringify(currency)})`);
    else currencies.add(currency);
    const input = priceNanos(e.input, `"${model}".input`, problems);
    const output = priceNanos(e.output, `"${model}".output`, problems);
    const cachedInput =
      e.cached_input === undefined ? input : priceNanos(e.cached_input, `"${model}".cached_input`, problems);
    models.set(model, { input, output, cachedInput });
  }
  if (currencies.size > 1)
    problems.push(
      `one currency for the whole table (got ${[...currencies].sort().join(', ')}): convert the prices to one`,
    );
  if (problems.length) return { problems };
  return { table: { currency: [...currencies][0] ?? 'USD', models } };
}

/** nanos-per-million x tokens, to whole nanos (half up). */
const times = (tokens: number, perMillion: bigint): bigint => (BigInt(tokens) * perMillion + 500_000n) / 1_000_000n;

/**
 * What these tokens of `model` cost at the table; null when the table does not price the model (or
 * there is no table). A `free` model (one the service answers itself: echo, the demo models) costs
 * 0 unless the table prices it.
 */
export function costOf(table: PriceTable | null, model: string, usage: PricedUsage, free = false): CostNanos | null {
  if (!table) return null;
  const price = table.models.get(model);
  if (!price) return free ? { currency: table.currency, input: 0, output: 0 } : null;
  const cached = Math.min(Math.max(usage.cached_tokens ?? 0, 0), usage.prompt_tokens);
  const input = times(usage.prompt_tokens - cached, price.input) + times(cached, price.cachedInput);
  return {
    currency: table.currency,
    input: Number(input),
    output: Number(times(usage.completion_tokens, price.output)),
  };
}

/** The sum of two costs; a cost in another currency than the first (the table changed meanwhile) is left out. */
export function addCost(a: CostNanos | null, b: CostNanos | null): CostNanos | null {
  if (!a) return b;
  if (!b || b.currency !== a.currency) return a;
  return { currency: a.currency, input: a.input + b.input, output: a.output + b.output };
}

/** The contract's `Cost`: amounts in units of the currency (exact to 9 decimals). */
export function costToWire(cost: CostNanos): { currency: string; input: number; output: number; total: number } {
  const units = (nanos: number) => Number((nanos / NANOS).toFixed(9));
  return {
    currency: cost.currency,
    input: units(cost.input),
    output: units(cost.output),
    total: units(cost.input + cost.output),
  };
}

/** The price table of a configuration (null: none configured, so no model has a cost). */
export const priceTable = (config: { MODEL_PRICES: PriceTable | null }): PriceTable | null => config.MODEL_PRICES;

/** The currency costs are in (a budget's unit); null without a price table. */
export const tableCurrency = (config: { MODEL_PRICES: PriceTable | null }): string | null =>
  config.MODEL_PRICES?.currency ?? null;
