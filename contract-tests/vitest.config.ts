import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['contract-tests/**/*.test.ts'],
    sequence: { concurrent: false },
    testTimeout: 30_000,
  },
});
