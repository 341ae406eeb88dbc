import { describe, expect, it } from 'vitest';
import { scrubbedUrlAttributes } from './scrub.ts';
import { tracingWanted } from './wanted.ts';

describe('URL attributes on spans', () => {
  it('keep a trigger URL token only to its public prefix, and no query value', () => {
    expect(
      scrubbedUrlAttributes({
        'url.path': '/hooks/wht_abcdefghijklmnopqrstuvwxyz',
        'url.query': 'code=abc&state=xyz&flag',
        'url.full': 'https://user:pw@example.com/cb?token=s3cret',
        'http.target': '/oauth/callback?code=abc',
        'http.route': '/hooks/:token',
      }),
    ).toEqual({
      'url.path': '/hooks/wht_abcdefgh[redacted]',
      'url.query': 'code=[redacted]&state=[redacted]&flag',
      'url.full': 'https://example.com/cb?token=[redacted]',
      'http.target': '/oauth/callback?code=[redacted]',
    });
  });

  it('leave a plain URL as it is (nothing to rewrite)', () => {
    expect(scrubbedUrlAttributes({ 'url.path': '/api/workflows', 'url.full': 'http://x/v1/chat/completions' })).toEqual(
      {},
    );
  });
});

describe('tracingWanted', () => {
  it('is on only when an endpoint or an exporter is named, and not disabled', () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' })).toBe(false);
    expect(tracingWanted({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });
});
