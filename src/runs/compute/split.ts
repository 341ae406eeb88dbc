// The `split` node's computation: a text made into a list, so a `map` node can
// work through all of it. Runs in a compute process (functions.ts) under the run's budgets. It
// never drops text silently (the map-reduce that summarised 900 of 2,000 words): by size, the
// chunks joined again are the text; past `max_items` the node fails instead of cutting the list.

/** The split's own failure: functions.ts hands it on as the node's FunctionError of the same code. */
export class SplitError extends Error {
  readonly code: 'too_many_items' | 'invalid_config';
  constructor(code: 'too_many_items' | 'invalid_config', message: string) {
    super(message);
    this.code = code;
  }
}

export interface SplitInput {
  text: string;
  /** `separator`: at each occurrence of `separator`; `characters` / `tokens`: chunks of at most `size`. */
  by: 'separator' | 'characters' | 'tokens';
  separator?: string;
  size?: number;
  /** Characters (or approximate tokens) each chunk repeats from the end of the one before. */
  overlap?: number;
  /** The most items the list may have: more fails with `too_many_items`. */
  maxItems: number;
}

/**
 * Characters per token of the `tokens` approximation: OpenAI's rule of thumb for English text
 * ("one token is about 4 characters"). No tokenizer runs (none would match every provider's), so
 * a chunk of code or of a language written with fewer letters per word may hold more tokens.
 */
export const CHARS_PER_TOKEN = 4;

/** Where a chunk prefers to end, best first: a paragraph, a line, a sentence, a word. */
const BREAKS = [/\n\s*\n/g, /\n/g, /[.!?。！？]["')\]]?\s/g, /\s/g];

export function splitText(input: SplitInput): string[] {
  const items = input.by === 'separator' ? bySeparator(input.text, input.separator ?? '\n') : bySize(input);
  if (items.length > input.maxItems) tooMany(items.length, input.maxItems);
  return items;
}

/** The pieces between separators, without the empty (or blank) ones. */
function bySeparator(text: string, separator: string): string[] {
  if (separator === '') throw new SplitError('invalid_config', 'The separator is empty.');
  return text.split(separator).filter((piece) => piece.trim() !== '');
}

/**
 * Chunks of at most `size` characters (`size` * CHARS_PER_TOKEN for tokens), each ending at the
 * best break (BREAKS) in its second half, else at `size`; never inside a surrogate pair. Without
 * overlap the chunks joined are the text. A blank text is no chunk.
 */
function bySize({ text, by, size = 1000, overlap = 0, maxItems }: SplitInput): string[] {
  const scale = by === 'tokens' ? CHARS_PER_TOKEN : 1;
  const max = size * scale;
  const back = overlap * scale;
  if (back >= max) throw new SplitError('invalid_config', `overlap (${overlap}) must be less than size (${size}).`);
  if (text.trim() === '') return [];
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = chunkEnd(text, start, max);
    chunks.push(text.slice(start, end));
    // Stop past the cap: a huge text with a tiny size would otherwise build a huge list first.
    if (chunks.length > maxItems) tooMany(chunks.length + estimateRest(text, end, max - back), maxItems, 'about ');
    if (end >= text.length) break;
    start = Math.max(end - back, start + 1);
    if (isLowSurrogate(text, start)) start -= 1;
  }
  return chunks;
}

function chunkEnd(text: string, start: number, max: number): number {
  let end = start + max;
  if (end >= text.length) return text.length;
  if (isLowSurrogate(text, end)) end -= 1;
  const window = text.slice(start, end);
  const half = Math.floor(window.length / 2);
  for (const pattern of BREAKS) {
    let best = -1;
    for (const match of window.matchAll(pattern)) best = match.index + match[0].length;
    if (best > half) return start + best;
  }
  return end > start ? end : start + 1;
}

function tooMany(count: number, maxItems: number, about = ''): never {
  throw new SplitError(
    'too_many_items',
    `The text splits into ${about}${count} items, more than max_items (${maxItems}); nothing was cut: raise max_items or the size.`,
  );
}

/** How many more chunks the rest would make at least (only to say how many items there would be). */
const estimateRest = (text: string, from: number, step: number): number =>
  Math.ceil((text.length - from) / Math.max(1, step));

const isLowSurrogate = (text: string, at: number): boolean => {
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff;
};
