// Shows every echo of a secret value in a step's output or error as `[secret NAME]`. A server seldom
// echoes a credential byte for byte: it puts it in JSON (escaped: `\"`, `\/`, `\u00e9`), in a URL
// or a form (percent-encoded, spaces as `+`, sometimes twice), in an HTML error page (`&quot;`,
// `&#39;`) or quotes it in an error message (`\'`). Each character of the value is matched in any of
// those spellings, mixed freely, so one pattern per secret finds them all.

const hex = (n: number, width: number) =>
  n
    .toString(16)
    .padStart(width, '0')
    .split('')
    .map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d))
    .join('');

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

// A backslash escape may itself be escaped again: `'` quoted in a message (`\'`) that a JSON body
// carries reads `\\'`. So an escape's backslash is one to seven of them.
const BACKSLASHES = '\\\\{1,7}';
const JSON_LETTER: Record<string, string> = { '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't' };
const HTML_NAMED: Record<string, string[]> = {
  '"': ['&quot;'],
  "'": ['&apos;'],
  '&': ['&amp;'],
  '<': ['&lt;'],
  '>': ['&gt;'],
};

/** Every spelling of one character (a code point) that the pattern accepts, as regular expressions. */
function spellings(char: string): string[] {
  const code = char.codePointAt(0)!;
  const bytes = [...Buffer.from(char, 'utf8')];
  const units = char.length === 2 ? [char.charCodeAt(0), char.charCodeAt(1)] : [code];
  const forms = new Set<string>([escapeRegExp(char)]);
  forms.add(bytes.map((b) => `%(?:25)?${hex(b, 2)}`).join('')); // URL or form encoding, once or twice
  forms.add(units.map((u) => `${BACKSLASHES}u${hex(u, 4)}`).join('')); // JSON \uXXXX (ASCII-only or HTML-safe encoders)
  if (`"'\`/\\`.includes(char)) forms.add(`${BACKSLASHES}${escapeRegExp(char)}`); // JSON (\" \/ \\) or a quoted string's escape
  if (JSON_LETTER[char]) forms.add(`${BACKSLASHES}${JSON_LETTER[char]}`);
  if (char === ' ') forms.add('\\+');
  for (const entity of HTML_NAMED[char] ?? []) forms.add(escapeRegExp(entity));
  forms.add(`&#0*${code};`);
  forms.add(`&#[xX]0*${hex(code, 1)};`);
  return [...forms];
}

/** A pattern that finds `value` however it was escaped or encoded. */
function patternOf(value: string, anyCase: boolean): RegExp {
  return new RegExp([...value].map((c) => `(?:${spellings(c).join('|')})`).join(''), anyCase ? 'gi' : 'g');
}

/**
 * The redaction of these secrets (name -> value): each value, in any spelling above, becomes
 * `[secret NAME]`. Longer values go first, so a value that contains another is shown by its own name.
 * `anyCase`: in any case too, for what a URL parser or a resolver lower-cased (a host name in an error).
 */
export function secretRedactor(
  values: ReadonlyMap<string, string>,
  options: { anyCase?: boolean } = {},
): (text: string) => string {
  const patterns = [...values]
    .filter(([, value]) => value !== '')
    .sort(([, a], [, b]) => b.length - a.length)
    .map(([name, value]) => ({
      literal: value,
      pattern: patternOf(value, options.anyCase ?? false),
      shown: `[secret ${name}]`,
    }));
  return (text) =>
    patterns.reduce((out, { literal, pattern, shown }) => out.split(literal).join(shown).replace(pattern, shown), text);
}
