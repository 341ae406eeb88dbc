// The price table setting (MODEL_PRICES, or MODEL_PRICES_FILE naming a file that holds it), read
// and checked with the rest of the environment by src/config.ts; its format and what it prices are
// src/shared/prices.ts's, docs/operating.md's configuration table shows an example.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parsePriceTable, type PriceTable } from './shared/prices.ts';

const blank = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

export function priceEnv() {
  return {
    MODEL_PRICES: z.preprocess(blank, z.string().optional()),
    MODEL_PRICES_FILE: z.preprocess(blank, z.string().optional()),
  };
}

/** The table the settings give (null: none), or the problems that refuse the start. */
export function priceTableOf(e: {
  MODEL_PRICES?: string | undefined;
  MODEL_PRICES_FILE?: string | undefined;
}): { table: PriceTable | null } | { problems: string[] } {
  if (e.MODEL_PRICES !== undefined && e.MODEL_PRICES_FILE !== undefined)
    return { problems: ['MODEL_PRICES_FILE: give the price table in MODEL_PRICES or in a file, not both'] };
  let text = e.MODEL_PRICES;
  const name = text !== undefined ? 'MODEL_PRICES' : 'MODEL_PRICES_FILE';
  if (e.MODEL_PRICES_FILE !== undefined) {
    try {
      text = readFileSync(e.MODEL_PRICES_FILE, 'utf8');
    } catch (err) {
      return { problems: [`MODEL_PRICES_FILE: cannot read "${e.MODEL_PRICES_FILE}" (${(err as Error).message})`] };
    }
  }
  if (text === undefined) return { table: null };
  const parsed = parsePriceTable(text);
  if ('problems' in parsed) return { problems: parsed.problems.map((p) => `${name}: ${p}`) };
  return parsed;
}
