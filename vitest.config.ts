import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // One embedded PostgreSQL for the whole run; each suite makes its own database on it (test/support/db.ts).
    globalSetup: ['test/support/globalSetup.ts'],
    // Cheap password hashes for the many users tests create (test/support/passwordCost.ts).
    setupFiles: ['test/support/passwordCost.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // CI keeps a JUnit report next to the console summary.
    reporters: process.env.CI ? ['default', 'junit'] : ['default'],
    outputFile: { junit: 'artifacts/vitest/junit.xml' },
  },
});
