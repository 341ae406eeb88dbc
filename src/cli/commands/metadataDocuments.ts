// The admin CLI's commands for clients identified by a Client ID Metadata Document (an https URL
// as client_id): the cached ones, and forgetting one (its grants and tokens die with it).
import { forgetMetadataDocumentClient, listMetadataDocumentClients } from '../../oauth/metadataDocuments.ts';
import { clientNotFound } from '../../shared/errors.ts';
import { isoOrNull, type Command } from '../command.ts';

export const metadataDocumentCommands: Record<string, Command> = {
  'client-document list': {
    usage: 'client-document list',
    summary:
      'the cached metadata-document clients (client_id URL, name, redirect URIs, when fetched, max-age, first seen), oldest first',
    options: [],
    needs: [],
    run: async (ctx) => ({
      data: (await listMetadataDocumentClients(ctx)).map((c) => ({
        client_id: c.url,
        name: c.name,
        redirect_uris: c.redirectUris,
        fetched_at: isoOrNull(c.fetchedAt),
        max_age_seconds: c.maxAgeSeconds,
        created_at: isoOrNull(c.createdAt),
      })),
    }),
  },
  'client-document forget': {
    usage: 'client-document forget --client-id URL',
    summary:
      "forgets a cached metadata-document client: its users' grants and tokens are revoked at once; its next authorization request fetches the document anew",
    options: ['client-id'],
    needs: ['client-id'],
    run: async (ctx, v) => {
      if (!(await forgetMetadataDocumentClient(ctx, v['client-id']!))) throw clientNotFound(v['client-id']!);
      return { forgotten: v['client-id']! };
    },
  },
};
