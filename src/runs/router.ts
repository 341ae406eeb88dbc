import { Router } from 'express';
import type { AppContext } from '../context.ts';

/** Run endpoints under /api/workflows/{id}/run(s) (issue 7). */
export function runsRouter(_ctx: AppContext): Router {
  return Router();
}
