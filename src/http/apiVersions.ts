// API versions (openapi.yaml info.description, "Versions"; docs/generators.md). Releases from
// FIRST_OPEN_RELEASE on are forward compatible by construction (open response schemas, nodes
// read through one open schema): one answer serves every client generated from them. Earlier
// releases closed some response objects (`additionalProperties: false`) and read nodes through a
// `oneOf` of the types they knew, so strict generators refuse what later versions added. A client
// generated from one of those sends `Api-Version: 1.0` (or 1.1): its answers are shaped to that
// release's schema, read from its file in contract-tests/releases/ (the released contracts are
// the source of truth; nothing is restated here).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RequestHandler } from 'express';
import { parse } from 'yaml';
import { Problem } from '../shared/errors.ts';
import { shapeToRelease, Unrepresentable, type Release } from './releaseShape.ts';

export const API_VERSION_HEADER = 'Api-Version';
/** The first release whose clients read every later minor version as it is. */
export const FIRST_OPEN_RELEASE = '1.2';

const minorOf = (version: string) => /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(version.trim());

/** The released contracts older than FIRST_OPEN_RELEASE, by minor (`1.0`), each its newest patch. */
export function loadLegacyReleases(dir: string): Map<string, Release> {
  const [openMajor, openMinor] = FIRST_OPEN_RELEASE.split('.').map(Number) as [number, number];
  const files = readdirSync(dir)
    .filter((f) => /^openapi-\d+\.\d+\.\d+\.yaml$/.test(f))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const releases = new Map<string, Release>();
  for (const file of files) {
    const [, major, minor] = minorOf(file.slice('openapi-'.length, -'.yaml'.length))!.map(Number) as [
      number,
      number,
      number,
    ];
    if (major > openMajor || (major === openMajor && minor >= openMinor)) continue;
    releases.set(`${major}.${minor}`, parse(readFileSync(path.join(dir, file), 'utf8')) as Release);
  }
  return releases;
}

/**
 * Reads `Api-Version`. Absent, or FIRST_OPEN_RELEASE and later within the major: the answer as it
 * is. An older release: `res.json` bodies shaped to that release's response schema (fields it did
 * not have dropped; a list leaves out what it cannot show; one resource it cannot show is a 406).
 * Mounted before the contract validator, so the validator checks the whole answer first.
 */
export function apiVersions(releases: Map<string, Release>, currentVersion: string): RequestHandler {
  const current = minorOf(currentVersion)!;
  const supported = [...releases.keys(), `${current[1]}.x from ${FIRST_OPEN_RELEASE}`].join(', ');
  return (req, res, next) => {
    const asked = req.headers['api-version'];
    if (asked === undefined) return next();
    const version = typeof asked === 'string' ? minorOf(asked) : null;
    const minor = version ? `${Number(version[1])}.${Number(version[2])}` : '';
    const release = releases.get(minor);
    const newer =
      version !== null &&
      Number(version[1]) === Number(current[1]) &&
      !release &&
      Number(version[2]) <= Number(current[2]);
    if (!release && !newer) {
      return next(
        new Problem(
          'unsupported_api_version',
          `Api-Version ${JSON.stringify(String(asked))} is not one this service answers; it answers ${supported} (or leave the header out for the newest).`,
        ),
      );
    }
    res.setHeader(API_VERSION_HEADER, release ? minor : `${current[1]}.${current[2]}`);
    if (!release) return next();
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const operationId = (req as { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
      if (!operationId || res.statusCode >= 300) return json(body);
      try {
        return json(shapeToRelease(release, operationId, res.statusCode, body));
      } catch (err) {
        if (!(err instanceof Unrepresentable)) throw err;
        const problem = new Problem(
          'not_representable_in_api_version',
          `API version ${minor} cannot show this: ${err.message}. Leave Api-Version out (or send ${FIRST_OPEN_RELEASE} or later) to read it.`,
        );
        res.status(problem.status).type('application/problem+json');
        return res.send(JSON.stringify(problem.body(req.originalUrl.split('?')[0])));
      }
    };
    next();
  };
}
