import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The unit tier (`npm run test:unit`, seconds): the test files that need no database and start no
 * process of the service, so they run without the embedded PostgreSQL of globalSetup. A file that
 * uses test/support/db.ts or server.ts belongs to the `db` project, never here: without
 * globalSetup it fails at once.
 */
const unitFiles = [
  'bench/hydra/config.test.ts',
  'bench/scaleLoad.test.ts',
  'src/config.test.ts',
  'src/db/batched.test.ts',
  'src/db/knex.test.ts',
  'src/http/operations.test.ts',
  'src/http/pagination.test.ts',
  'src/outbound/addresses.test.ts',
  'src/outbound/request.test.ts',
  'src/platform/views/graphSvg.test.ts',
  'src/runs/compute/pool.test.ts',
  'src/runs/compute/split.test.ts',
  'src/runs/executor.test.ts',
  'src/runs/nodes/map.test.ts',
  'src/runs/providers/demo.test.ts',
  'src/runs/providers/providers.test.ts',
  'src/runs/stepPace.test.ts',
  'src/runs/toRun.test.ts',
  'src/runs/waiting.test.ts',
  'src/shared/crypto.test.ts',
  'src/shared/errors.test.ts',
  'src/shared/principalLease.test.ts',
  'src/shared/sealing.test.ts',
  'src/shared/sseStream.test.ts',
  'src/nodes/registry.test.ts',
  'src/workflows/graph.test.ts',
  'src/workflows/subgraphs.test.ts',
  'src/workflows/validationErrors.test.ts',
  'bench/usage.test.ts',
  'test/client/helpers.test.ts',
  'test/contract/enumNames.test.ts',
  'test/contract/generatorGuide.test.ts',
  'test/contract/operationProblems.test.ts',
  'test/contract/versionRules.test.ts',
];

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
          exclude: [...configDefaults.exclude, ...unitFiles],
          // One embedded PostgreSQL for the whole run; each suite makes its own database on it (test/support/db.ts).
          globalSetup: ['test/support/globalSetup.ts'],
        },
      },
    ],
  },
});
