import type { Knex } from 'knex';
import type { Sealer } from '../shared/sealing.ts';
import * as initial from './migrations/0001_initial.ts';
import * as runLogsWhole from './migrations/0002_run_logs_whole.ts';
import { sealSecretsMigration } from './migrations/0003_seal_secrets.ts';
import * as exactCollations from './migrations/0004_exact_collations.ts';
import * as webSessions from './migrations/0005_web_sessions.ts';
import * as clientSecrets from './migrations/0006_client_secrets.ts';
import * as accessTokenExpiry from './migrations/0007_access_token_expiry.ts';
import * as runEvents from './migrations/0008_run_events.ts';
import * as tokenSuccessors from './migrations/0009_token_successors.ts';
import * as accessScope from './migrations/0010_access_scope.ts';
import * as chainRevocation from './migrations/0011_chain_revocation.ts';
import * as workflowVersions from './migrations/0012_workflow_versions.ts';
import * as workflowHooks from './migrations/0013_workflow_hooks.ts';
import * as userSecrets from './migrations/0014_user_secrets.ts';
import * as workflowSchedules from './migrations/0016_workflow_schedules.ts';
import * as stepOutputJson from './migrations/0017_step_output_json.ts';
import * as stepAttempts from './migrations/0019_step_attempts.ts';
import * as oidcCodes from './migrations/0020_oidc_codes.ts';
import * as idTokenAlg from './migrations/0021_id_token_alg.ts';
import * as storageQuotas from './migrations/0022_storage_quotas.ts';
import * as callbackPausing from './migrations/0023_callback_pausing.ts';
import * as pkceRequired from './migrations/0024_pkce_required.ts';
import * as refreshSuccessorPairs from './migrations/0025_refresh_successor_pairs.ts';
import * as tokensWithoutAuthorization from './migrations/0026_tokens_without_authorization.ts';
import * as triggerReading from './migrations/0027_trigger_reading.ts';
import * as runStepsKeyset from './migrations/0028_run_steps_keyset.ts';
import * as runRetries from './migrations/0029_run_retries.ts';
import * as approval from './migrations/0030_approval.ts';
import * as runTraceContext from './migrations/0031_run_trace_context.ts';
import * as runCosts from './migrations/0032_run_costs.ts';
import * as budgets from './migrations/0033_budgets.ts';
import * as deviceAuthorizations from './migrations/0034_device_authorizations.ts';
import * as dpop from './migrations/0035_dpop.ts';
import * as pushedRequests from './migrations/0036_pushed_authorization_requests.ts';
import * as workflowMcpTools from './migrations/0037_workflow_mcp_tools.ts';
import * as dynamicClientRegistration from './migrations/0038_dynamic_client_registration.ts';
import * as tokenAudience from './migrations/0039_token_audience.ts';
import * as clientMetadataDocuments from './migrations/0040_client_metadata_documents.ts';
import * as stepChosenCase from './migrations/0041_step_chosen_case.ts';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export interface MigrateOptions {
  /** The key-encryption key's sealer: 0003 seals existing plaintext secrets with it. */
  sealer?: Sealer | undefined;
}

/** Every migration, in order. Add new ones here; knex's file loader is not used (it cannot load .ts). */
function migrations(options: MigrateOptions): ReadonlyArray<readonly [name: string, migration: Migration]> {
  return [
    ['0001_initial', initial],
    ['0002_run_logs_whole', runLogsWhole],
    ['0003_seal_secrets', sealSecretsMigration(options.sealer)],
    ['0004_exact_collations', exactCollations],
    ['0005_web_sessions', webSessions],
    ['0006_client_secrets', clientSecrets],
    ['0007_access_token_expiry', accessTokenExpiry],
    ['0008_run_events', runEvents],
    ['0009_token_successors', tokenSuccessors],
    ['0010_access_scope', accessScope],
    ['0011_chain_revocation', chainRevocation],
    ['0012_workflow_versions', workflowVersions],
    ['0013_workflow_hooks', workflowHooks],
    ['0014_user_secrets', userSecrets],
    ['0016_workflow_schedules', workflowSchedules],
    ['0017_step_output_json', stepOutputJson],
    ['0019_step_attempts', stepAttempts],
    ['0020_oidc_codes', oidcCodes],
    ['0021_id_token_alg', idTokenAlg],
    ['0022_storage_quotas', storageQuotas],
    ['0023_callback_pausing', callbackPausing],
    ['0024_pkce_required', pkceRequired],
    ['0025_refresh_successor_pairs', refreshSuccessorPairs],
    ['0026_tokens_without_authorization', tokensWithoutAuthorization],
    ['0027_trigger_reading', triggerReading],
    ['0028_run_steps_keyset', runStepsKeyset],
    ['0029_run_retries', runRetries],
    ['0030_approval', approval],
    ['0031_run_trace_context', runTraceContext],
    ['0032_run_costs', runCosts],
    ['0033_budgets', budgets],
    ['0034_device_authorizations', deviceAuthorizations],
    ['0035_dpop', dpop],
    ['0036_pushed_authorization_requests', pushedRequests],
    ['0037_workflow_mcp_tools', workflowMcpTools],
    ['0038_dynamic_client_registration', dynamicClientRegistration],
    ['0039_token_audience', tokenAudience],
    ['0040_client_metadata_documents', clientMetadataDocuments],
    ['0041_step_chosen_case', stepChosenCase],
  ];
}

function migratorConfig(options: MigrateOptions): Knex.MigratorConfig {
  const list = migrations(options);
  const migrationSource: Knex.MigrationSource<string> = {
    getMigrations: async () => list.map(([name]) => name),
    getMigrationName: (name) => name,
    getMigration: async (name) => {
      const found = list.find(([n]) => n === name);
      if (!found) throw new Error(`Unknown migration ${name}`);
      return found[1];
    },
  };
  return { migrationSource, tableName: 'knex_migrations' };
}

/** Applies pending migrations; returns the names applied. Concurrent starters are serialised by knex's lock table. */
export async function migrateLatest(db: Knex, options: MigrateOptions = {}): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(migratorConfig(options))) as [number, string[]];
  return applied;
}

/** Applies the next pending migration only; returns its name (none: []). For tests of one migration's data. */
export async function migrateUp(db: Knex, options: MigrateOptions = {}): Promise<string[]> {
  const [, applied] = (await db.migrate.up(migratorConfig(options))) as [number, string[]];
  return applied;
}

/** Rolls back the last batch, or every migration with `all`; returns the names rolled back. */
export async function migrateRollback(db: Knex, options: { all?: boolean } & MigrateOptions = {}): Promise<string[]> {
  const [, rolledBack] = (await db.migrate.rollback(migratorConfig(options), options.all ?? false)) as [
    number,
    string[],
  ];
  return rolledBack;
}
