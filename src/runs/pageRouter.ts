// Routes that read a run's history a page at a time (openapi.yaml: listRunSteps, listRunEvents):
// a run of any size answers in bounded memory, each page linked to the next.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import type { Operations } from '../http/operations.ts';
import * as stepPages from './stepPages.ts';
import * as eventPages from './eventPages.ts';
import { runIdOf, runsPath, userOf, workflowIdOf } from './routeParams.ts';

type JsonOf<Op extends 'listRunSteps' | 'listRunEvents'> =
  operations[Op]['responses'][200]['content']['application/json'];
type StepsQuery = NonNullable<operations['listRunSteps']['parameters']['query']>;
type EventsQuery = NonNullable<operations['listRunEvents']['parameters']['query']>;

export function runPageOperations(ctx: AppContext): Operations {
  async function listRunSteps(req: Request, res: Response<JsonOf<'listRunSteps'>>) {
    const query = req.query as StepsQuery;
    const page = { cursor: Number(query.cursor ?? 0), limit: Number(query.limit ?? 50) };
    const found = await stepPages.listRunSteps(ctx, userOf(req), workflowIdOf(req), runIdOf(req), page);
    const next = found.meta.next_cursor;
    if (next !== null)
      res.setHeader(
        'Link',
        `<${runsPath(workflowIdOf(req))}/${runIdOf(req)}/steps?cursor=${next}&limit=${page.limit}>; rel="next"`,
      );
    res.status(200).json(found);
  }

  async function listRunEvents(req: Request, res: Response<JsonOf<'listRunEvents'>>) {
    const query = req.query as EventsQuery;
    const page = { after: Number(query.after ?? 0), limit: Number(query.limit ?? 100) };
    const found = await eventPages.listRunEvents(ctx, userOf(req), workflowIdOf(req), runIdOf(req), page);
    const next = found.meta.next_after;
    const path = `${runsPath(workflowIdOf(req))}/${runIdOf(req)}/event-log`;
    if (next !== null) res.setHeader('Link', `<${path}?after=${next}&limit=${page.limit}>; rel="next"`);
    res.status(200).json(found);
  }

  return { listRunSteps, listRunEvents };
}
