import type { Knex } from 'knex';
import type { Sealer } from '../../shared/sealing.ts';
import { hasPlaintextSecrets, hasSealedSecrets, sealAllSecrets, unsealAllSecrets } from '../sealedSecrets.ts';

// Seals the signing keys' private JWKs and the app secrets (session key) written in plaintext by
// earlier versions with the key-encryption key (SECRETS_KEY, or DATA_DIR/secrets.key outside
// production). It needs the key, so migrateLatest passes it in; without a key it applies only to
// a store with nothing to seal (a fresh database).

export function sealSecretsMigration(sealer: Sealer | undefined) {
  return {
    async up(knex: Knex): Promise<void> {
      if (sealer) await sealAllSecrets(knex, sealer);
      else if (await hasPlaintextSecrets(knex)) throw new Error('0003_seal_secrets: plaintext secrets to seal, but no key-encryption key was given');
    },
    async down(knex: Knex): Promise<void> {
      if (sealer) await unsealAllSecrets(knex, sealer);
      else if (await hasSealedSecrets(knex)) throw new Error('0003_seal_secrets: sealed secrets to unseal, but no key-encryption key was given');
    },
  };
}
