// The suite creates hundreds of users: in the test processes their passwords are hashed at scrypt
// N=2^10 (TEST_PASSWORD_HASH_COST), not at the production default of 2^17 (about 0.3 s and 128 MiB
// per hash on a quiet machine, seconds under load). Child processes keep their configuration's
// PASSWORD_HASH_COST (17 unless a test passes TEST_PASSWORD_HASH_COST, as the admin CLI tests do).
// One test proves the default and the upgrade of cheaper hashes at login:
// src/accounts/passwordHashing.test.ts.
import { setPasswordHashCost } from '../../src/shared/crypto.ts';

export const TEST_PASSWORD_HASH_COST = 10;

setPasswordHashCost(TEST_PASSWORD_HASH_COST);
