import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { parse } from 'yaml';
import { methodNotAllowed as notAllowed } from '../shared/errors.ts';

const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * The contract's methods, for every path, including those the request validator leaves alone:
 * - a method openapi.yaml does not document on a documented path (TRACE too, which the validator
 *   does not know) is a 405 with `Allow` (RFC 9110 15.5.6);
 * - HEAD is GET without the content (RFC 9110 9.3.2), as `Allow: GET, HEAD` promises. The spec
 *   documents GET only, so what follows sees a GET; node's response still knows the request was
 *   HEAD and sends the headers alone.
 */
export function methodRules(specPath: string): RequestHandler {
  const spec = parse(readFileSync(specPath, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  const exact = new Map<string, string[]>();
  const patterns: { regex: RegExp; methods: string[] }[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    const methods = Object.keys(item)
      .filter((m) => httpMethods.includes(m))
      .map((m) => m.toUpperCase());
    if (methods.includes('GET')) methods.push('HEAD');
    if (!path.includes('{')) exact.set(path, methods);
    const pattern = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+');
    patterns.push({ regex: new RegExp(`^${pattern}/?$`), methods });
  }
  const methodsOf = (path: string) => exact.get(path) ?? patterns.find((r) => r.regex.test(path))?.methods;
  return (req, _res, next) => {
    const methods = methodsOf(req.path);
    if (methods && !methods.includes(req.method)) return next(notAllowed(req.method, req.path, methods));
    if (req.method === 'HEAD') req.method = 'GET';
    next();
  };
}
