import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { parse } from 'yaml';
import { methodNotAllowed as notAllowed } from '../shared/errors.ts';

const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * 405 with `Allow` for a method openapi.yaml does not document on a documented path (RFC 9110
 * 15.5.6), for every path, including those the request validator leaves alone, and for methods
 * (TRACE) the validator does not know.
 */
export function methodNotAllowed(specPath: string): RequestHandler {
  const spec = parse(readFileSync(specPath, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(spec.paths).map(([path, item]) => {
    const methods = Object.keys(item).filter((m) => httpMethods.includes(m)).map((m) => m.toUpperCase());
    if (methods.includes('GET')) methods.push('HEAD');
    const pattern = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+');
    return { regex: new RegExp(`^${pattern}/?$`), methods };
  });
  return (req, _res, next) => {
    const route = routes.find((r) => r.regex.test(req.path));
    if (!route || route.methods.includes(req.method)) return next();
    next(notAllowed(req.method, req.path, route.methods));
  };
}
