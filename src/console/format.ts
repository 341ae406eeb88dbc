// How the console writes times, durations, statuses and token counts: one module for the server's
// views and the browser's script (src/console/browser/), so a page updated live reads as one
// rendered anew. Pure: no Node and no DOM, which both type checks hold it to.

/** A timestamp as the console shows it: `2026-11-23 16:49 UTC`. */
export const formatDate = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

/** An ISO timestamp as the console shows it; `—` for none. */
export const isoDate = (iso: string | null): string => (iso === null ? '—' : formatDate(Date.parse(iso)));

/** Seconds as people read them: `0.42 s`, `12 s`, `3 min 05 s`; `—` for none. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 10) return `${seconds.toFixed(2)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** The seconds from one ISO timestamp to another; null while either is missing. */
export const secondsBetween = (from: string | null | undefined, to: string | null | undefined): number | null =>
  from && to ? (Date.parse(to) - Date.parse(from)) / 1000 : null;

/** A run or node status as words: `not_started` is `not started`. */
export const statusWords = (status: string): string => status.replace('_', ' ');

/** A step's token split, under its total: `12 in, 30 out`. */
export const tokenSplit = (usage: { prompt_tokens: number; completion_tokens: number }): string =>
  `${usage.prompt_tokens} in, ${usage.completion_tokens} out`;

/** A count and its noun: `1 problem`, `3 problems`. */
export const countOf = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** A cost as the console writes it: `$0.42`, `€1,234.50`; under one unit, up to six decimals (`$0.00012`). */
export function formatMoney(amount: number, currency: string): string {
  const small = amount !== 0 && Math.abs(amount) < 1;
  try {
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency,
      minimumFractionDigits: 2,
      maximumFractionDigits: small ? 6 : 2,
    }).format(amount);
  } catch {
    return `${amount.toFixed(small ? 6 : 2)} ${currency}`; // a code Intl does not know: the number and the code
  }
}

/** A token count with its thousands apart: `12,345`. */
export const formatTokens = (tokens: number): string => new Intl.NumberFormat('en-US').format(tokens);
