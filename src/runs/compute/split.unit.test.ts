// The split node's computation: a list that covers the whole text, capped in
// length without dropping anything silently.
import { describe, expect, it } from 'vitest';
import { CHARS_PER_TOKEN, SplitError, splitText } from './split.ts';

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('splitText', () => {
  it('by separator: the pieces between separators, blank ones dropped', () => {
    expect(splitText({ text: 'a,b,,c, ,d', by: 'separator', separator: ',', maxItems: 10 })).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    expect(splitText({ text: 'one\ntwo\n', by: 'separator', maxItems: 10 })).toEqual(['one', 'two']);
  });

  it('by characters: no chunk is longer than size and the chunks joined are the whole text (2,000 words, none lost)', () => {
    const text = words(2000);
    const chunks = splitText({ text, by: 'characters', size: 500, maxItems: 1000 });
    expect(chunks.length).toBeGreaterThan(text.length / 500);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(500);
    expect(chunks.join('')).toBe(text);
    expect(chunks.at(-1)).toContain('word1999');
  });

  it('by characters: a chunk ends at a paragraph, else a sentence, else a word, when one is in its second half', () => {
    const text = `${'a'.repeat(60)}\n\n${'b'.repeat(30)}. ${'c'.repeat(50)}`;
    const chunks = splitText({ text, by: 'characters', size: 100, maxItems: 10 });
    expect(chunks[0]).toBe(`${'a'.repeat(60)}\n\n`);
    expect(splitText({ text: 'Hello there. General Kenobi', by: 'characters', size: 20, maxItems: 10 })).toEqual([
      'Hello there. ',
      'General Kenobi',
    ]);
    expect(splitText({ text: 'x'.repeat(25), by: 'characters', size: 10, maxItems: 10 })).toEqual([
      'x'.repeat(10),
      'x'.repeat(10),
      'x'.repeat(5),
    ]);
  });

  it('never cuts inside a surrogate pair', () => {
    const text = '😀'.repeat(10);
    const chunks = splitText({ text, by: 'characters', size: 5, maxItems: 100 });
    expect(chunks.join('')).toBe(text);
    for (const chunk of chunks) expect(chunk).toMatch(/^(😀)+$/u);
  });

  it(`by tokens: approximately ${CHARS_PER_TOKEN} characters a token`, () => {
    const text = words(400);
    const chunks = splitText({ text, by: 'tokens', size: 100, maxItems: 100 });
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(100 * CHARS_PER_TOKEN);
    expect(chunks.join('')).toBe(text);
  });

  it('overlap: each chunk repeats the end of the one before; overlap >= size is refused', () => {
    const chunks = splitText({ text: 'abcdefghij', by: 'characters', size: 4, overlap: 1, maxItems: 10 });
    expect(chunks).toEqual(['abcd', 'defg', 'ghij']);
    expect(() => splitText({ text: 'abc', by: 'characters', size: 4, overlap: 4, maxItems: 10 })).toThrow(/overlap/);
  });

  it('a blank text is an empty list', () => {
    expect(splitText({ text: '  \n', by: 'characters', size: 10, maxItems: 10 })).toEqual([]);
    expect(splitText({ text: '', by: 'separator', separator: ',', maxItems: 10 })).toEqual([]);
  });

  it('more items than max_items fails with too_many_items (nothing cut silently), also long before building the whole list', () => {
    const failure = (() => {
      try {
        splitText({ text: 'a,b,c', by: 'separator', separator: ',', maxItems: 2 });
      } catch (err) {
        return err;
      }
    })();
    expect(failure).toBeInstanceOf(SplitError);
    expect(failure).toMatchObject({
      code: 'too_many_items',
      message: expect.stringContaining('3 items, more than max_items (2)'),
    });
    expect(() => splitText({ text: 'x'.repeat(5_000_000), by: 'characters', size: 1, maxItems: 10 })).toThrow(
      /about 5000000 items/,
    );
  });
});
