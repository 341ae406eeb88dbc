/** The scopes an application may request, with the words the consent page shows for each. */
export const SCOPES = {
  // OpenID Connect Core 3.1.2.1: asks for an ID token (sign-in); the profile itself stays user_info's.
  openid: 'Sign you in to the application with your account (your user id).',
  user_info: 'Read your identity (id, login, name, avatar) and the organizations you belong to.',
  api_key: 'List your access tokens and issue short-lived proxy tokens for them.',
  // The MCP server (src/mcp/): an AI assistant lists and runs the workflows you expose as tools.
  'workflows:run':
    'See the workflows you expose to AI assistants as tools, and run them (their runs count against your quotas and budgets).',
  // The workflows API's reads (listWorkflows, getWorkflow): a CLI lists your workflows; writes and runs keep needing an API key.
  'workflows:read': 'See your workflows (their names, nodes and settings), without changing or running them.',
} as const;

export type Scope = keyof typeof SCOPES;

export const SUPPORTED_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/** Splits a space-delimited scope parameter (RFC 6749 3.3); duplicates collapse, order is kept. */
export function splitScope(value: string | undefined | null): string[] {
  return [...new Set((value ?? '').split(' ').filter(Boolean))];
}

/** Canonical storage and wire form: known scopes in catalogue order, space separated. */
export function joinScopes(scopes: readonly string[]): string {
  return SUPPORTED_SCOPES.filter((s) => scopes.includes(s)).join(' ');
}
