// The path parameters and paths every runs route reads (router.ts, pageRouter.ts).
import type { Request } from 'express';
import { principalOf } from '../http/principal.ts';

export const userOf = (req: Request) => principalOf(req, 'apiKey').userId;
export const workflowIdOf = (req: Request) => String(req.params.workflow_id);
export const runIdOf = (req: Request) => String(req.params.run_id);
export const runsPath = (workflowId: string) => `/api/workflows/${workflowId}/runs`;
