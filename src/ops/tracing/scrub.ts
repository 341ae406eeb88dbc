import type { AttributeValue, Attributes } from '@opentelemetry/api';

/** The URL attributes of the HTTP semantic conventions, old and stable. */
const URL_KEYS = ['http.url', 'http.target', 'url.full', 'url.path', 'url.query'];

/** A trigger URL's path is its credential (`/hooks/wht_<token>`): only its public first characters are kept. */
const TRIGGER_PATH = /(\/hooks\/)([^/?#]{0,12})[^/?#]*/;

/** The query's values hidden, its names kept (`code`, `state`, a user's template may put a secret in any). */
function scrubQuery(query: string): string {
  if (!query) return query;
  return query
    .split('&')
    .map((pair) => (pair.includes('=') ? `${pair.slice(0, pair.indexOf('='))}=[redacted]` : pair))
    .join('&');
}

function scrubUrl(key: string, value: string): string {
  if (key === 'url.query') return scrubQuery(value);
  const q = value.indexOf('?');
  const path = (q < 0 ? value : value.slice(0, q)).replace(TRIGGER_PATH, '$1$2[redacted]');
  return q < 0 ? path : `${path}?${scrubQuery(value.slice(q + 1))}`;
}

/** The URL attributes among `attributes` that need rewriting, rewritten (user info, trigger tokens, query values). */
export function scrubbedUrlAttributes(attributes: Attributes): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const key of URL_KEYS) {
    const value = attributes[key];
    if (typeof value !== 'string') continue;
    let scrubbed = scrubUrl(key, value);
    // user:password@ in a full URL
    scrubbed = scrubbed.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
    if (scrubbed !== value) out[key] = scrubbed;
  }
  return out;
}
