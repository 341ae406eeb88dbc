// The admin CLI's commands (src/cli/main.ts parses the command line and runs one): each names
// its options and calls the same services as the HTTP API. One module per group of commands.
import type { Command } from './command.ts';
import { appCommands } from './commands/apps.ts';
import { clientCommands } from './commands/clients.ts';
import { credentialCommands } from './commands/credentials.ts';
import { operationCommands } from './commands/operations.ts';
import { userCommands } from './commands/users.ts';
import { metadataDocumentCommands } from './commands/metadataDocuments.ts';

export { options, required, UsageError, type Command, type Output, type Values } from './command.ts';

/** Every command, in the order --help lists them. */
export const commands: Record<string, Command> = {
  ...userCommands,
  ...appCommands,
  ...clientCommands,
  ...credentialCommands,
  ...operationCommands,
  ...metadataDocumentCommands,
};

export const groups = [...new Set(Object.keys(commands).map((name) => name.split(' ')[0]!))];
