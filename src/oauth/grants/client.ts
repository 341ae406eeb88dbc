import type { AppContext } from '../../context.ts';
import { invalidClient } from '../../shared/errors.ts';
import type { ClientCredentials } from '../clientAuth.ts';
import type { IssuedToSecret } from '../store.ts';
import { clientSecretMatches } from '../../platform/apps.ts';
import { authenticateClient } from '../clients.ts';

/** What a grant read along with its code or refresh token: the client it was issued to. */
export interface IssuedTo {
  clientId: string;
  clientSecrets: IssuedToSecret[];
}

/**
 * Authenticates the client (RFC 6749 3.2.1, 2.3.1) before anything about the code or token is
 * revealed: RFC 6749 5.2 puts invalid_client before invalid_grant. When the grant's row was issued
 * to the presented client, its secrets came with the row and no query is needed.
 */
export async function authenticateGrantClient(ctx: AppContext, credentials: ClientCredentials, row: IssuedTo | null): Promise<string> {
  const { clientId, clientSecret } = credentials;
  // Every registered application is confidential: a secret is always required (RFC 6749 2.3).
  const authenticated = !clientSecret
    ? false
    : row?.clientId === clientId
      ? await clientSecretMatches(ctx, row.clientSecrets, clientSecret)
      : (await authenticateClient(ctx, clientId, clientSecret)) !== null;
  if (!authenticated) throw invalidClient(credentials.usedBasic);
  return clientId;
}
