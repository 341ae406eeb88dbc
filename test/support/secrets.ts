// The key-encryption key of test services (a fixed test value, like a fixture: never a real key).
import { loadSealer } from '../../src/shared/keyEncryptionKey.ts';
import type { Sealer } from '../../src/shared/sealing.ts';
import type { Config } from '../../src/config.ts';

export const TEST_SECRETS_KEY = 'dGVzdCBrZXktZW5jcnlwdGlvbiBrZXkgLSAzMiBieXQ=';

/** The sealer a test context uses: its config's SECRETS_KEY (TEST_SECRETS_KEY unless a test sets another). */
export function testSealer(config: Config): Promise<Sealer> {
  if (!config.SECRETS_KEY) throw new Error('test contexts need SECRETS_KEY (TEST_SECRETS_KEY)');
  return loadSealer(config);
}
