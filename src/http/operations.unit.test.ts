import knex from 'knex';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { createSealer } from '../shared/sealing.ts';
import type { AppContext } from '../context.ts';
import { operationHandlers, specPath, type RateLimiters } from '../app.ts';
import { createLogger } from './logger.ts';
import { contractOperations, mountOperations } from './operations.ts';

// The contract is the route table (operations.ts): each operation of openapi.yaml is served by the
// handler of the same operationId, so grepping an operationId lands on its code.

const ctx: AppContext = {
  config: loadConfig({}),
  db: knex({ client: 'pg' }),
  logger: createLogger({ level: 'silent' }),
  sealer: createSealer(Buffer.alloc(32)),
  now: Date.now,
};
const unusedLimiters = {} as RateLimiters;

describe('operations', () => {
  it('has a handler for every operationId of openapi.yaml, and none for an operation it does not declare', () => {
    const declared = contractOperations(specPath).map((o) => o.operationId);
    const handled = Object.keys(operationHandlers(ctx, unusedLimiters));
    expect(declared.length).toBeGreaterThan(20);
    expect([...new Set(declared)].sort()).toEqual(handled.sort());
  });

  it('refuses to mount the contract when an operation has no handler', () => {
    const handlers = operationHandlers(ctx, unusedLimiters);
    delete handlers.getRun;
    expect(() => mountOperations(specPath, handlers)).toThrow('openapi.yaml operation getRun has no handler');
  });
});
