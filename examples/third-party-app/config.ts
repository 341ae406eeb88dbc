import { randomBytes } from 'node:crypto';

export interface ExampleConfig {
  /** The OpenAuth service: the OAuth issuer and the API base URL. */
  serviceUrl: string;
  clientId: string;
  clientSecret: string;
  clientAuth: 'client_secret_basic' | 'client_secret_post';
  host: string;
  port: number;
  /** Must equal the redirect_uri registered for the app in the service. */
  redirectUri: string;
  /** Seals the session cookie; random per start unless set (sessions then end on restart). */
  sessionSecret: string;
}

/** Reads the configuration from the environment; throws one message listing every problem. */
export function loadExampleConfig(env: NodeJS.ProcessEnv = process.env): ExampleConfig {
  const problems: string[] = [];
  const port = Number(env.PORT ?? '4000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push('PORT must be a port number.');
  const clientAuth = env.CLIENT_AUTH ?? 'client_secret_basic';
  if (clientAuth !== 'client_secret_basic' && clientAuth !== 'client_secret_post')
    problems.push('CLIENT_AUTH must be client_secret_basic or client_secret_post.');
  if (!env.CLIENT_ID)
    problems.push("CLIENT_ID is required (the demo app's client_id, printed by the service on its first start).");
  if (!env.CLIENT_SECRET) problems.push('CLIENT_SECRET is required (printed once with the client_id).');
  const serviceUrl = (env.SERVICE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
  const redirectUri = env.REDIRECT_URI ?? `http://localhost:${port}/callback`;
  for (const [name, value] of [
    ['SERVICE_URL', serviceUrl],
    ['REDIRECT_URI', redirectUri],
  ] as const) {
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
      problems.push(`${name} must be an http(s) URL.`);
  }
  if (problems.length) throw new Error(`Configuration problems:\n  ${problems.join('\n  ')}`);
  return {
    serviceUrl,
    clientId: env.CLIENT_ID!,
    clientSecret: env.CLIENT_SECRET!,
    clientAuth: clientAuth as ExampleConfig['clientAuth'],
    host: env.HOST ?? 'localhost',
    port,
    redirectUri,
    sessionSecret: env.SESSION_SECRET ?? randomBytes(32).toString('hex'),
  };
}
