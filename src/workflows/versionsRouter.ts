// Routes of /api/workflows/{workflow_id}/versions (openapi.yaml: listWorkflowVersions,
// getWorkflowVersion, restoreWorkflowVersion). The contract validator has authenticated the API
// key and coerced the params; handlers map HTTP to versions.ts.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/principal.ts';
import type { Operations } from '../http/operations.ts';
import { pageOf, paginationLinks, searchOf } from '../http/pagination.ts';
import { etagOf } from './service.ts';
import * as versions from './versions.ts';

type JsonOf<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = operations[Op]['responses'][Status] extends { content: { 'application/json': infer Body } } ? Body : never;

type ListQuery = NonNullable<operations['listWorkflowVersions']['parameters']['query']>;

const userOf = (req: Request) => principalOf(req, 'apiKey').userId;
const workflowIdOf = (req: Request) => String(req.params.workflow_id);
const versionOf = (req: Request) => Number(req.params.version);
const versionsPath = (workflowId: string) => `/api/workflows/${workflowId}/versions`;

export function workflowVersionOperations(ctx: AppContext): Operations {
  async function listWorkflowVersions(req: Request, res: Response<JsonOf<'listWorkflowVersions', 200>>) {
    const query = req.query as ListQuery;
    const search = searchOf(query);
    const page = await versions.listWorkflowVersions(ctx, userOf(req), workflowIdOf(req), {
      ...pageOf(query),
      search,
    });
    res.setHeader('Link', paginationLinks(versionsPath(workflowIdOf(req)), page.meta, { search }));
    res.status(200).json(page);
  }

  async function getWorkflowVersion(req: Request, res: Response<JsonOf<'getWorkflowVersion', 200>>) {
    const version = await versions.getWorkflowVersion(ctx, userOf(req), workflowIdOf(req), versionOf(req));
    res.status(200).json({ data: version });
  }

  async function restoreWorkflowVersion(req: Request, res: Response<JsonOf<'restoreWorkflowVersion', 201>>) {
    const workflow = await versions.restoreWorkflowVersion(
      ctx,
      userOf(req),
      workflowIdOf(req),
      versionOf(req),
      req.get('If-Match'),
    );
    res.setHeader('Location', `${versionsPath(workflow.id)}/${workflow.version}`);
    res.setHeader('ETag', etagOf(workflow.version));
    res.status(201).json({ data: workflow });
  }

  return { listWorkflowVersions, getWorkflowVersion, restoreWorkflowVersion };
}
