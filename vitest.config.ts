import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The unit tier (`npm run test:unit`, seconds), by name: `*.unit.test.ts`, the test files that need
 * no database and start no process of the service, so they run without the embedded PostgreSQL of
 * globalSetup. A file that uses test/support/db.ts or server.ts is a plain `*.test.ts` in the `db`
 * project: without globalSetup it fails at once.
 */
const unitFiles = ['{src,test,bench,scripts,contract-tests}/**/*.unit.test.ts'];

export default defineConfig({
  test: {
    // Cheap password hashes for the many users tests create (test/support/passwordCost.ts).
    setupFiles: ['test/support/passwordCost.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // CI keeps a JUnit report next to the console summary.
    reporters: process.env.CI ? ['default', 'junit'] : ['default'],
    outputFile: { junit: 'artifacts/vitest/junit.xml' },
    // `npm test` runs both projects.
    projects: [
      { extends: true, test: { name: 'unit', include: unitFiles } },
      {
        extends: true,
        test: {
          name: 'db',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, '**/*.unit.test.ts'],
          // One embedded PostgreSQL for the whole run; each suite makes its own database on it (test/support/db.ts).
          globalSetup: ['test/support/globalSetup.ts'],
        },
      },
    ],
  },
});
