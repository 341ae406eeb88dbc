// The admin CLI's application commands: registration, redirect URI, PKCE, client secrets.
import {
  addClientSecret,
  clientSecretsOf,
  createApp,
  deleteClientSecret,
  findAppByClientId,
  setPkceRequired,
  updateApp,
  type Application,
} from '../../accounts/apps.ts';
import { clientNotFound, lastClientSecret, Problem } from '../../shared/errors.ts';
import type { SealerContext } from '../../context.ts';
import { idOf, isoOrNull, UsageError, type Command, type Values } from '../command.ts';

/** --pkce: `required` (the default) or `optional` (this confidential client may leave PKCE out). */
function pkceOption(v: Values): boolean | undefined {
  if (v.pkce === undefined) return undefined;
  if (v.pkce !== 'required' && v.pkce !== 'optional')
    throw new UsageError(`--pkce is required or optional, not ${JSON.stringify(v.pkce)}`);
  return v.pkce === 'required';
}

/** An application with an owner: these commands manage those; clients that registered themselves have `client` commands. */
async function appOf(ctx: SealerContext, clientId: string): Promise<Application & { owner_user_id: number }> {
  const app = await findAppByClientId(ctx, clientId);
  if (!app || app.owner_user_id === null) throw clientNotFound(clientId);
  return { ...app, owner_user_id: app.owner_user_id };
}

export const appCommands: Record<string, Command> = {
  'app create': {
    usage:
      'app create --owner LOGIN --name NAME --description TEXT --homepage URL --redirect-uri URL [--id-token-alg RS256|ES256] [--pkce required|optional]',
    summary:
      'prints client_id and client_secret (shown once); --id-token-alg: how its OpenID Connect ID tokens are signed (id_token_signed_response_alg; RS256 unless given); --pkce optional: let this confidential client leave out PKCE (required unless given)',
    options: ['owner', 'name', 'description', 'homepage', 'redirect-uri', 'id-token-alg', 'pkce'],
    needs: ['owner', 'name', 'description', 'homepage', 'redirect-uri'],
    check: (v) => void pkceOption(v),
    run: async (ctx, v) => {
      const { app, clientSecret } = await createApp(ctx, {
        ownerLogin: v.owner!,
        name: v.name!,
        description: v.description!,
        homepage: v.homepage!,
        redirectUri: v['redirect-uri']!,
        idTokenAlg: v['id-token-alg'],
        pkceRequired: pkceOption(v),
      });
      const { id, client_id, name, redirect_uri, id_token_signed_response_alg } = app;
      return {
        id,
        client_id,
        client_secret: clientSecret,
        name,
        redirect_uri,
        id_token_signed_response_alg,
        pkce_required: Boolean(app.pkce_required),
      };
    },
  },
  'app update': {
    usage:
      'app update --client-id ID [--name NAME] [--description TEXT] [--homepage URL] [--redirect-uri URL] [--id-token-alg RS256|ES256] [--pkce required|optional]',
    summary:
      'changes the given details; the client secret stays; --pkce optional lets this confidential client leave out PKCE (RFC 9700 2.1.1 recommends it of every client)',
    options: ['client-id', 'name', 'description', 'homepage', 'redirect-uri', 'id-token-alg', 'pkce'],
    needs: ['client-id'],
    check: (v) => void pkceOption(v),
    run: async (ctx, v) => {
      const found = await appOf(ctx, v['client-id']!);
      const details = {
        ...(v.name !== undefined ? { name: v.name } : {}),
        ...(v.description !== undefined ? { description: v.description } : {}),
        ...(v.homepage !== undefined ? { homepage: v.homepage } : {}),
        ...(v['redirect-uri'] !== undefined ? { redirectUri: v['redirect-uri'] } : {}),
        ...(v['id-token-alg'] !== undefined ? { idTokenAlg: v['id-token-alg'] } : {}),
      };
      const pkceRequired = pkceOption(v);
      if (!Object.keys(details).length && pkceRequired === undefined)
        throw new UsageError(
          'nothing to change: give --name, --description, --homepage, --redirect-uri, --id-token-alg or --pkce',
        );
      if (pkceRequired !== undefined) await setPkceRequired(ctx, found.id, pkceRequired);
      const app = {
        ...(await updateApp(ctx, found.owner_user_id, found.id, details)),
        ...(pkceRequired !== undefined ? { pkce_required: pkceRequired } : {}),
      };
      return {
        id: app.id,
        client_id: app.client_id,
        name: app.name,
        description: app.description,
        homepage: app.homepage,
        redirect_uri: app.redirect_uri,
        id_token_signed_response_alg: app.id_token_signed_response_alg,
        pkce_required: Boolean(app.pkce_required),
      };
    },
  },
  'app list-secrets': {
    usage: 'app list-secrets --client-id ID',
    summary: "the app's client secrets (id, created_at, last_used_at; never the secret itself)",
    options: ['client-id'],
    needs: ['client-id'],
    run: async (ctx, v) => {
      const app = await appOf(ctx, v['client-id']!);
      const secrets = await clientSecretsOf(ctx, app);
      return {
        data: secrets.map((s) => ({
          id: s.id,
          created_at: isoOrNull(s.created_at),
          last_used_at: isoOrNull(s.last_used_at),
        })),
      };
    },
  },
  'app generate-secret': {
    usage: 'app generate-secret --client-id ID',
    summary:
      'a second client secret for a rotation (two at most); prints it once. The other keeps working until app delete-secret',
    options: ['client-id'],
    needs: ['client-id'],
    run: async (ctx, v) => {
      const app = await appOf(ctx, v['client-id']!);
      const { clientSecret, secretId, secretCount } = await addClientSecret(ctx, app.owner_user_id, app.id);
      return { client_id: app.client_id, id: secretId, client_secret: clientSecret, secrets: secretCount };
    },
  },
  'app delete-secret': {
    usage: 'app delete-secret --client-id ID --id SECRET_ID [--even-the-last]',
    summary:
      'deletes one client secret (an id from app list-secrets): clients presenting it are refused at once. The last one goes only with --even-the-last',
    options: ['client-id', 'id', 'even-the-last'],
    needs: ['client-id', 'id'],
    run: async (ctx, v) => {
      const id = idOf(v.id!, 'client secret');
      const app = await appOf(ctx, v['client-id']!);
      try {
        const secretsLeft = await deleteClientSecret(ctx, app.owner_user_id, app.id, id, {
          evenTheLast: v['even-the-last'] ?? false,
        });
        return { deleted: true, client_id: app.client_id, id, secrets_left: secretsLeft };
      } catch (err) {
        // The service refuses the last secret in the console's words (a confirmation); here it takes a flag.
        if (!(err instanceof Problem) || err.code !== 'last_client_secret') throw err;
        throw lastClientSecret(app.name, 'Run app generate-secret first, or give --even-the-last to delete it anyway.');
      }
    },
  },
};
