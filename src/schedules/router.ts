// Routes of /api/workflows/{workflow_id}/schedules (openapi.yaml: listSchedules, createSchedule,
// getSchedule, updateSchedule, deleteSchedule). The contract validator has authenticated the API
// key and checked params and body; handlers map HTTP to service.ts.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/principal.ts';
import type { Operations } from '../http/operations.ts';
import { pageOf, paginationLinks } from '../http/pagination.ts';
import * as service from './service.ts';

type JsonOf<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = operations[Op]['responses'][Status] extends { content: { 'application/json': infer Body } } ? Body : never;

type ListQuery = NonNullable<operations['listSchedules']['parameters']['query']>;

const userOf = (req: Request) => principalOf(req, 'apiKey').userId;
const workflowIdOf = (req: Request) => String(req.params.workflow_id);
const scheduleIdOf = (req: Request) => String(req.params.schedule_id);
const schedulesPath = (workflowId: string) => `/api/workflows/${workflowId}/schedules`;

/** What ends a deleted workflow's schedules and their queued ticks (the app assembly passes it to the workflows' delete). */
export function endSchedulesOfDeletedWorkflow(ctx: AppContext): (workflowId: string) => Promise<void> {
  return (workflowId) => service.endSchedulesOfDeletedWorkflow(ctx, workflowId);
}

export function scheduleOperations(ctx: AppContext): Operations {
  async function listSchedules(req: Request, res: Response<JsonOf<'listSchedules', 200>>) {
    const query = req.query as ListQuery;
    const page = await service.listSchedules(ctx, userOf(req), workflowIdOf(req), pageOf(query));
    res.setHeader('Link', paginationLinks(schedulesPath(workflowIdOf(req)), page.meta));
    res.status(200).json(page);
  }

  async function createSchedule(req: Request, res: Response<JsonOf<'createSchedule', 201>>) {
    const schedule = await service.createSchedule(
      ctx,
      userOf(req),
      workflowIdOf(req),
      req.body as service.ScheduleCreate,
    );
    res.setHeader('Location', `${schedulesPath(schedule.workflow_id)}/${schedule.id}`);
    res.status(201).json({ data: schedule });
  }

  async function getSchedule(req: Request, res: Response<JsonOf<'getSchedule', 200>>) {
    res.status(200).json({ data: await service.getSchedule(ctx, userOf(req), workflowIdOf(req), scheduleIdOf(req)) });
  }

  async function updateSchedule(req: Request, res: Response<JsonOf<'updateSchedule', 200>>) {
    const schedule = await service.updateSchedule(
      ctx,
      userOf(req),
      workflowIdOf(req),
      scheduleIdOf(req),
      req.body as service.ScheduleUpdate,
    );
    res.status(200).json({ data: schedule });
  }

  async function deleteSchedule(req: Request, res: Response) {
    await service.deleteSchedule(ctx, userOf(req), workflowIdOf(req), scheduleIdOf(req));
    res.status(204).end();
  }

  return { listSchedules, createSchedule, getSchedule, updateSchedule, deleteSchedule };
}
