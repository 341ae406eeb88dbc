import { describe, expect, it } from 'vitest';
import { secretRedactor } from './secretRedaction.ts';

const VALUE = `k3y/"quoted" it's <é & 100%> ok😀`;
const redact = secretRedactor(
  new Map([
    ['API_KEY', VALUE],
    ['SHORT', 'tok_1234'],
  ]),
);

describe('secret redaction (each echo of a secret value shows as [secret NAME])', () => {
  it.each([
    ['as sent', VALUE],
    ['JSON-escaped', JSON.stringify(VALUE).slice(1, -1)],
    ['JSON-escaped with \\/ (PHP)', JSON.stringify(VALUE).slice(1, -1).replace(/\//g, '\\/')],
    [
      'JSON-escaped, ASCII only (Python ensure_ascii)',
      JSON.stringify(VALUE)
        .slice(1, -1)
        .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    ],
    [
      'JSON-escaped, HTML-safe (Go: \\u003c, \\u0026, upper-case hex)',
      JSON.stringify(VALUE)
        .slice(1, -1)
        .replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`),
    ],
    ['percent-encoded (URL)', encodeURIComponent(VALUE)],
    ['percent-encoded, lower-case hex', encodeURIComponent(VALUE).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ['form-encoded', new URLSearchParams({ k: VALUE }).toString().slice(2)],
    ['percent-encoded twice', encodeURIComponent(encodeURIComponent(VALUE))],
    [
      'HTML-escaped',
      VALUE.replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;')
        .replace(/'/g, '&#39;'),
    ],
    ['quoted in an error message (Python repr)', VALUE.replace(/'/g, "\\'")],
    ['quoted in an error message, then JSON-escaped', JSON.stringify(VALUE.replace(/'/g, "\\'")).slice(1, -1)],
    ['JSON-escaped twice', JSON.stringify(JSON.stringify(VALUE)).slice(3, -3)],
  ])('finds it %s', (_how, echo) => {
    const text = `error: invalid credential '${echo}' (at ${echo})`;
    const out = redact(text);
    expect(out).toBe(`error: invalid credential '[secret API_KEY]' (at [secret API_KEY])`);
  });

  it('finds an echo inside a JSON error body, and the body stays JSON', () => {
    const body = JSON.stringify({
      error: { message: `Incorrect API key provided: "${VALUE}"`, param: encodeURIComponent(VALUE) },
    });
    expect(JSON.parse(redact(body))).toEqual({
      error: { message: 'Incorrect API key provided: "[secret API_KEY]"', param: '[secret API_KEY]' },
    });
  });

  it('finds a plain token spelled in escapes, and leaves other text alone', () => {
    expect(redact('Bearer \\u0074ok_1234, tok%5F1234, tok_1234')).toBe(
      'Bearer [secret SHORT], [secret SHORT], [secret SHORT]',
    );
    expect(redact('tok_123 TOK_1234 tok-1234')).toBe('tok_123 TOK_1234 tok-1234');
  });

  it('finds a value a URL parser lower-cased when told to (error messages naming a host)', () => {
    const hosts = secretRedactor(new Map([['TENANT', 'AcmeCorp7']]), { anyCase: true });
    expect(hosts('The host acmecorp7.example.com is refused')).toBe('The host [secret TENANT].example.com is refused');
    expect(redact('TOK_1234')).toBe('TOK_1234');
  });

  it('shows a value that contains another secret by its own name', () => {
    const nested = secretRedactor(
      new Map([
        ['INNER', 'abc'],
        ['OUTER', 'xabcx'],
      ]),
    );
    expect(nested('xabcx abc')).toBe('[secret OUTER] [secret INNER]');
  });
});
