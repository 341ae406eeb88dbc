import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadWorkerConfig } from './config.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const KEK = Buffer.alloc(32, 1).toString('base64');
const OTHER_KEK = Buffer.alloc(32, 2).toString('base64url');

describe('configuration from the environment', () => {
  it('needs no setting for a local start: every default is usable', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '0.0.0.0',
      BASE_URL: 'http://localhost:3000',
      DATABASE_URL: undefined,
      DATA_DIR: './.data',
      AUTH_CODE_TTL_SECONDS: 300,
      ACCESS_TOKEN_TTL_SECONDS: 7200,
      REFRESH_TOKEN_TTL_SECONDS: 2_592_000,
      REFRESH_REUSE_GRACE_SECONDS: 30,
      PROXY_TOKEN_TTL_SECONDS: 1800,
      ID_TOKEN_TTL_SECONDS: 3600,
      WORKFLOW_MAX_TOKENS_LIMIT: 32768,
      BODY_LIMIT_BYTES: 1_048_576,
      RUN_TIMEOUT_SECONDS: 300,
      TOKEN_RATE_LIMIT_PER_MINUTE: 120,
      PRINCIPAL_CACHE_MS: 200,
      RESPONSE_VALIDATION: true,
      MODEL_PROVIDER_MODELS: [],
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('does not validate PORT for a worker, which serves no HTTP (PORT=0 or any value starts it); the API still refuses it', () => {
    for (const PORT of ['0', '70000', 'http']) {
      expect(() => loadConfig({ PORT })).toThrow(ConfigError);
      expect(loadWorkerConfig({ PORT }).BASE_URL).toBe('http://localhost:3000');
    }
    expect(loadWorkerConfig({ PORT: '8080' }).BASE_URL).toBe('http://localhost:8080');
  });

  it('reads the outbound allow-list (WORKFLOW_HTTP_ALLOW_HOSTS): empty by default, every bad entry named', () => {
    expect(loadConfig({}).WORKFLOW_HTTP_ALLOW_HOSTS).toEqual([]);
    expect(loadConfig({ WORKFLOW_HTTP_ALLOW_HOSTS: 'api.internal, 10.0.0.0/8' }).WORKFLOW_HTTP_ALLOW_HOSTS).toEqual([
      'api.internal',
      '10.0.0.0/8',
    ]);
    const problems = problemsOf({ WORKFLOW_HTTP_ALLOW_HOSTS: 'http://x, 10.0.0.0/40' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^WORKFLOW_HTTP_ALLOW_HOSTS: "http:\/\/x" is not a host name.*"10.0.0.0\/40" is not a CIDR range/,
    );
  });

  it('reads CLIENT_ID_METADATA_DOCUMENT_HOSTS: off by default, host names lower-cased, anything else named', () => {
    expect(loadConfig({}).CLIENT_ID_METADATA_DOCUMENT_HOSTS).toEqual([]);
    expect(
      loadConfig({ CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'App.Example.com, ,claude.ai' })
        .CLIENT_ID_METADATA_DOCUMENT_HOSTS,
    ).toEqual(['app.example.com', 'claude.ai']);
    const problems = problemsOf({ CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'https://x.example, *.example.com' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^CLIENT_ID_METADATA_DOCUMENT_HOSTS: not host names: https:\/\/x.example, \*.example.com/,
    );
  });

  it('derives BASE_URL from PORT and drops a trailing slash from a given one', () => {
    expect(loadConfig({ PORT: '8080' }).BASE_URL).toBe('http://localhost:8080');
    expect(loadConfig({ BASE_URL: 'https://auth.example.com/' }).BASE_URL).toBe('https://auth.example.com');
  });

  it('turns response validation off by default in production only', () => {
    expect(loadConfig({ NODE_ENV: 'production', SECRETS_KEY: KEK }).RESPONSE_VALIDATION).toBe(false);
    expect(
      loadConfig({ NODE_ENV: 'production', SECRETS_KEY: KEK, RESPONSE_VALIDATION: 'true' }).RESPONSE_VALIDATION,
    ).toBe(true);
  });

  it('creates demo data by default only in development on the embedded database, and never in production', () => {
    expect(loadConfig({}).DEMO).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'mysql://u:p@h/db' }).DEMO).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test' }).DEMO).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test', DEMO: 'true' }).DEMO).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', SECRETS_KEY: KEK }).DEMO).toBe(false);
    expect(problemsOf({ NODE_ENV: 'production', SECRETS_KEY: KEK, DEMO: 'true' })).toEqual([
      expect.stringMatching(/^DEMO: demo data \(a known login\) is never created in production/),
    ]);
  });

  it('refuses TRUST_PROXY=true in production (a forged leftmost X-Forwarded-For would evade per-address limits), and takes a hop count or addresses', () => {
    expect(problemsOf({ NODE_ENV: 'production', SECRETS_KEY: KEK, TRUST_PROXY: 'true' })).toEqual([
      expect.stringMatching(/^TRUST_PROXY: `true` trusts an X-Forwarded-For address any client can forge/),
    ]);
    expect(problemsOf({ NODE_ENV: 'production', SECRETS_KEY: KEK, TRUST_PROXY: ' TRUE ' })).toHaveLength(1);
    expect(loadConfig({ NODE_ENV: 'production', SECRETS_KEY: KEK, TRUST_PROXY: '1' }).TRUST_PROXY).toBe(1);
    expect(
      loadConfig({ NODE_ENV: 'production', SECRETS_KEY: KEK, TRUST_PROXY: 'loopback, 10.0.0.0/8' }).TRUST_PROXY,
    ).toBe('loopback, 10.0.0.0/8');
    expect(loadConfig({ NODE_ENV: 'production', SECRETS_KEY: KEK }).TRUST_PROXY).toBe(false);
  });

  it('requires a key-encryption key in production, and never echoes a bad one', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
      expect.stringMatching(/^SECRETS_KEY: required in production/),
    ]);
    const bad = problemsOf({ SECRETS_KEY: 'c2hvcnQga2V5', SECRETS_KEY_PREVIOUS: `${KEK},nope` });
    expect(bad.map((p) => p.split(':')[0])).toEqual(['SECRETS_KEY', 'SECRETS_KEY_PREVIOUS']);
    expect(bad.join('\n')).not.toContain('c2hvcnQga2V5');
    const config = loadConfig({ SECRETS_KEY: KEK, SECRETS_KEY_PREVIOUS: `${OTHER_KEK}, ${KEK}` });
    expect(config.SECRETS_KEY).toEqual(Buffer.from(KEK, 'base64'));
    expect(config.SECRETS_KEY_PREVIOUS).toEqual([Buffer.from(OTHER_KEK, 'base64'), Buffer.from(KEK, 'base64')]);
    expect(problemsOf({ SECRETS_KEY_PREVIOUS: KEK })).toEqual([
      expect.stringMatching(/^SECRETS_KEY_PREVIOUS: needs SECRETS_KEY/),
    ]);
  });

  it('bounds the principal cache lease to 0-250 ms (0 disables it)', () => {
    expect(loadConfig({ PRINCIPAL_CACHE_MS: '0' }).PRINCIPAL_CACHE_MS).toBe(0);
    expect(loadConfig({ PRINCIPAL_CACHE_MS: '250' }).PRINCIPAL_CACHE_MS).toBe(250);
    expect(problemsOf({ PRINCIPAL_CACHE_MS: '251' })).toEqual([
      expect.stringMatching(/^PRINCIPAL_CACHE_MS: must be between 0 and 250/),
    ]);
    expect(problemsOf({ PRINCIPAL_CACHE_MS: '-1' })).toEqual([
      expect.stringMatching(/^PRINCIPAL_CACHE_MS: must be a whole number between 0 and 250/),
    ]);
  });

  it('splits MODEL_PROVIDER_MODELS on commas', () => {
    const config = loadConfig({
      MODEL_PROVIDER_BASE_URL: 'http://127.0.0.1:8000/v1/',
      MODEL_PROVIDER_MODELS: 'llama3, qwen2 ,',
    });
    expect(config.MODEL_PROVIDER_MODELS).toEqual(['llama3', 'qwen2']);
    expect(config.MODEL_PROVIDER_BASE_URL).toBe('http://127.0.0.1:8000/v1');
  });

  it('lists every bad value at once, one line each, naming the variable', () => {
    const problems = problemsOf({
      PORT: 'abc',
      BASE_URL: 'ftp://x',
      DATABASE_URL: 'sqlite:///tmp/x',
      QUEUE_URL: 'mysql://u:p@h/db',
      AUTH_CODE_TTL_SECONDS: '900',
      LOG_LEVEL: 'loud',
    });
    expect(problems).toHaveLength(6);
    expect(problems.map((p) => p.split(':')[0])).toEqual([
      'PORT',
      'BASE_URL',
      'DATABASE_URL',
      'QUEUE_URL',
      'LOG_LEVEL',
      'AUTH_CODE_TTL_SECONDS',
    ]);
    expect(problems.find((p) => p.startsWith('AUTH_CODE_TTL_SECONDS'))).toMatch(/between 1 and 600/);
  });

  it('never echoes a database URL, which carries a password', () => {
    const problems = problemsOf({ DATABASE_URL: 'oracle://admin:s3cret@db/x' });
    expect(problems.join('\n')).not.toContain('s3cret');
  });

  it('accepts mysql://, postgres:// and postgresql:// stores', () => {
    for (const url of ['mysql://u:p@h:3306/db', 'postgres://u:p@h/db', 'postgresql://u:p@h/db']) {
      expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
    }
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ PORT: 3000, DATABASE_URL: undefined });
  });
});
