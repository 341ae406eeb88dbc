import { readFileSync } from 'node:fs';
import { Router, type RequestHandler } from 'express';
import { parse } from 'yaml';
import type { operations } from '../../generated/api.d.ts';

export type OperationId = keyof operations;

/** Each domain's handlers by their operationId in openapi.yaml (middleware first, the handler last). */
export type Operations = Partial<Record<OperationId, RequestHandler | RequestHandler[]>>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** Every operation of the contract: its operationId, method and path. */
export function contractOperations(
  specPath: string,
): { operationId: string; method: (typeof METHODS)[number]; path: string }[] {
  const spec = parse(readFileSync(specPath, 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]?.operationId).map((method) => ({
      operationId: item[method]!.operationId!,
      method,
      path,
    })),
  );
}

/**
 * Mounts each operation of openapi.yaml on its method and path, served by the handler of the same
 * operationId: the contract is the route table, and a reader who greps an operationId lands on
 * its handler. An operation without a handler stops the app from starting.
 */
export function mountOperations(specPath: string, handlers: Operations): Router {
  const router = Router();
  for (const { operationId, method, path } of contractOperations(specPath)) {
    const handler = handlers[operationId as OperationId];
    if (!handler) throw new Error(`openapi.yaml operation ${operationId} has no handler`);
    router[method](path.replace(/\{([^}]+)\}/g, ':$1'), ...[handler].flat());
  }
  return router;
}
