// The problems of a workflow's hooks, by name. Their codes are in the one catalogue
// (src/shared/errors.ts PROBLEM_CODES, which openapi.yaml's Problem.code lists).
import { Problem } from '../shared/errors.ts';

export const triggerNotFound = (what: string) => new Problem('trigger_not_found', `No trigger ${what}.`);
export const hookLimitReached = (what: string, max: number) =>
  new Problem('hook_limit_reached', `A workflow has at most ${max} ${what}: delete one first.`);
export const callbackNotFound = (id: string) => new Problem('callback_not_found', `No callback ${id}.`);
/** A callback URL the outbound guard refuses (src/outbound), pointing at the field. */
export const callbackUrlRefused = (reason: string) =>
  new Problem('callback_url_refused', reason, { errors: [{ pointer: '/body/url', message: reason }] });
/** A trigger's sender signature that is missing, wrong or stale (signatures.ts says which). */
export const invalidSignature = (reason: string) => new Problem('invalid_signature', reason);
