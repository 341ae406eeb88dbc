import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addCost, costOf, costToWire, parsePriceTable, type PriceTable } from './prices.ts';
import { loadConfig, type ConfigError } from '../config.ts';

const table = (json: unknown): PriceTable => {
  const parsed = parsePriceTable(JSON.stringify(json));
  if ('problems' in parsed) throw new Error(parsed.problems.join('; '));
  return parsed.table;
};

describe('the price table', () => {
  it('reads prices per million tokens exactly, cached input defaulting to input and currency to USD', () => {
    const t = table({ a: { input: 0.15, output: 0.6, cached_input: 0.075 }, b: { input: 3, output: 15 } });
    expect(t.currency).toBe('USD');
    expect(t.models.get('a')).toEqual({ input: 150_000_000n, output: 600_000_000n, cachedInput: 75_000_000n });
    expect(t.models.get('b')!.cachedInput).toBe(3_000_000_000n);
  });

  it('refuses a table mixing currencies, unknown fields, negative or too precise prices, and what is not JSON', () => {
    const problems = (text: string) => (parsePriceTable(text) as { problems: string[] }).problems;
    expect(
      problems(
        JSON.stringify({ a: { input: 1, output: 1, currency: 'USD' }, b: { input: 1, output: 1, currency: 'EUR' } }),
      ),
    ).toEqual(['one currency for the whole table (got EUR, USD): convert the prices to one']);
    expect(problems(JSON.stringify({ a: { input: -1, output: 1, extra: 2, currency: 'usd' } }))).toEqual([
      '"a": unknown field "extra"',
      '"a".currency: must be an ISO 4217 code such as "USD" (got "usd")',
      '"a".input: must be a number from 0 to 1000000 (price per million tokens)',
    ]);
    expect(problems(JSON.stringify({ a: { input: 0.0000000001, output: 1 } }))).toEqual([
      '"a".input: at most 9 decimals (got 1e-10)',
    ]);
    expect(problems('{')[0]).toMatch(/^not JSON/);
    expect(problems('[]')).toHaveLength(1);
  });

  it('prices tokens in integer nanos, cached input apart; an unpriced model has no cost unless the service serves it', () => {
    const t = table({ m: { input: 2.5, output: 10, cached_input: 1.25, currency: 'EUR' } });
    expect(costOf(t, 'm', { prompt_tokens: 1000, completion_tokens: 10, cached_tokens: 400 })).toEqual({
      currency: 'EUR',
      input: 600 * 2500 + 400 * 1250,
      output: 100_000,
    });
    expect(costOf(t, 'other', { prompt_tokens: 1, completion_tokens: 1 })).toBeNull();
    expect(costOf(t, 'echo', { prompt_tokens: 1, completion_tokens: 1 }, true)).toEqual({
      currency: 'EUR',
      input: 0,
      output: 0,
    });
    expect(costOf(null, 'm', { prompt_tokens: 1, completion_tokens: 1 })).toBeNull();
    // Half a nano rounds up; sums of many small costs stay exact.
    const tiny = table({ t: { input: 0.0005, output: 0 } });
    expect(costOf(tiny, 't', { prompt_tokens: 1, completion_tokens: 0 })).toMatchObject({ input: 1 });
    let sum = null as ReturnType<typeof addCost>;
    for (let i = 0; i < 10; i++) sum = addCost(sum, { currency: 'USD', input: 100_000_000, output: 200_000_000 });
    expect(costToWire(sum!)).toEqual({ currency: 'USD', input: 1, output: 2, total: 3 });
    expect(addCost(sum, { currency: 'EUR', input: 5, output: 5 })).toBe(sum);
  });

  it('is read from MODEL_PRICES or MODEL_PRICES_FILE at start, a bad one naming the setting', () => {
    expect(loadConfig({}).MODEL_PRICES).toBeNull();
    expect(loadConfig({ MODEL_PRICES: '{"m": {"input": 1, "output": 2}}' }).MODEL_PRICES!.models.has('m')).toBe(true);
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        return (err as ConfigError).problems;
      }
      return [];
    };
    expect(
      refused({ MODEL_PRICES: '{"a": {"input": 1, "output": 1, "currency": "EUR"}, "b": {"input": 1, "output": 1}}' }),
    ).toEqual(['MODEL_PRICES: one currency for the whole table (got EUR, USD): convert the prices to one']);
    expect(refused({ MODEL_PRICES_FILE: '/nonexistent/prices.json' })[0]).toMatch(/^MODEL_PRICES_FILE: cannot read/);
    const dir = mkdtempSync(join(tmpdir(), 'prices-'));
    writeFileSync(join(dir, 'prices.json'), '{"m": {"input": 1, "output": 2, "currency": "EUR"}}');
    expect(loadConfig({ MODEL_PRICES_FILE: join(dir, 'prices.json') }).MODEL_PRICES!.currency).toBe('EUR');
    writeFileSync(join(dir, 'bad.json'), '{"m": {"input": "1"}}');
    expect(refused({ MODEL_PRICES_FILE: join(dir, 'bad.json') })[0]).toMatch(
      /^MODEL_PRICES_FILE: "m".input: must be a number/,
    );
    rmSync(dir, { recursive: true });
    expect(refused({ MODEL_PRICES: '{}', MODEL_PRICES_FILE: '/x' })).toEqual([
      'MODEL_PRICES_FILE: give the price table in MODEL_PRICES or in a file, not both',
    ]);
  });
});
