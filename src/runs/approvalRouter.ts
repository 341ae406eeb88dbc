// The route that answers a waiting run's approval node (openapi.yaml resumeRun; approvals.ts).
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import type { Operations } from '../http/operations.ts';
import * as approvals from './approvals.ts';
import { runIdOf, userOf, workflowIdOf } from './routeParams.ts';

type ResumeBody = operations['resumeRun']['requestBody']['content']['application/json'];
type ResumeAnswer = operations['resumeRun']['responses'][200]['content']['application/json'];

export function approvalOperations(ctx: AppContext): Operations {
  async function resumeRun(req: Request, res: Response<ResumeAnswer>) {
    const run = await approvals.resumeRun(ctx, userOf(req), workflowIdOf(req), runIdOf(req), req.body as ResumeBody);
    res.status(200).json({ data: run });
  }

  return { resumeRun };
}
