// Routes of /api/workflows and /api/workflows/{workflow_id} (openapi.yaml: listWorkflows,
// createWorkflow, getWorkflow, updateWorkflow, deleteWorkflow). The contract validator has already
// authenticated the API key (or, for the reads, the OAuth token) and checked params and body;
// handlers map HTTP to service.ts.
import type { ErrorRequestHandler, Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/principal.ts';
import { Problem } from '../shared/errors.ts';
import { toPointer } from '../http/errorHandler.ts';
import type { Operations } from '../http/operations.ts';
import { pageOf, paginationLinks, searchOf } from '../http/pagination.ts';
import { validateWorkflowFields } from './graph.ts';
import * as service from './service.ts';
import { servedModels } from './models.ts';

type JsonOf<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = operations[Op]['responses'][Status] extends { content: { 'application/json': infer Body } } ? Body : never;

type ListQuery = NonNullable<operations['listWorkflows']['parameters']['query']>;
type CreateBody = operations['createWorkflow']['requestBody']['content']['application/json'];
type UpdateBody = operations['updateWorkflow']['requestBody']['content']['application/json'];

const COLLECTION = '/api/workflows';

const userOf = (req: Request) => principalOf(req, 'apiKey').userId;
/** The reads also take an OAuth access token of the workflows:read scope (openapi.yaml): its user's own workflows. */
const readerOf = (req: Request) => principalOf(req, 'apiKey', 'oauth').userId;
const workflowIdOf = (req: Request) => String(req.params.workflow_id);
const ifMatchOf = (req: Request) => req.get('If-Match');

/**
 * `onDeleted`: what else ends with a workflow (its runs in flight: runs/router.ts); the app
 * assembly passes it, so this domain needs no other.
 */
export function workflowOperations(ctx: AppContext, onDeleted: (workflowId: string) => Promise<unknown>): Operations {
  async function listWorkflows(req: Request, res: Response<JsonOf<'listWorkflows', 200>>) {
    // The validator has coerced these and applied the contract's defaults and bounds.
    const query = req.query as ListQuery;
    const search = searchOf(query);
    const page = await service.listWorkflows(ctx, readerOf(req), {
      ...pageOf(query),
      search,
    });
    res.setHeader('Link', paginationLinks(COLLECTION, page.meta, { search }));
    res.status(200).json(page);
  }

  async function createWorkflow(req: Request, res: Response<JsonOf<'createWorkflow', 201>>) {
    const workflow = await service.createWorkflow(ctx, userOf(req), req.body as CreateBody);
    res.setHeader('Location', `${COLLECTION}/${workflow.id}`);
    res.setHeader('ETag', service.etagOf(workflow.version));
    res.status(201).json({ data: workflow });
  }

  async function getWorkflow(req: Request, res: Response<JsonOf<'getWorkflow', 200>>) {
    const workflow = await service.getWorkflow(ctx, readerOf(req), workflowIdOf(req));
    res.setHeader('ETag', service.etagOf(workflow.version));
    res.status(200).json({ data: workflow });
  }

  async function updateWorkflow(req: Request, res: Response<JsonOf<'updateWorkflow', 200>>) {
    const workflow = await service.updateWorkflow(
      ctx,
      userOf(req),
      workflowIdOf(req),
      req.body as UpdateBody,
      ifMatchOf(req),
    );
    res.setHeader('ETag', service.etagOf(workflow.version));
    res.status(200).json({ data: workflow });
  }

  async function deleteWorkflow(req: Request, res: Response) {
    await service.deleteWorkflow(ctx, userOf(req), workflowIdOf(req), ifMatchOf(req));
    // Deleted first, so no new run can start; then what is in flight stops.
    await onDeleted(workflowIdOf(req));
    res.status(204).end();
  }

  /** The same list for every user: what the service's providers serve, read from config. */
  function listWorkflowModels(req: Request, res: Response<JsonOf<'listWorkflowModels', 200>>) {
    readerOf(req);
    res.status(200).json(servedModels(ctx.config));
  }

  return { listWorkflows, listWorkflowModels, createWorkflow, getWorkflow, updateWorkflow, deleteWorkflow };
}

interface RequestValidationError {
  status: number;
  errors?: { path?: string; message?: string }[];
}

function isRequestValidationError(err: unknown): err is RequestValidationError {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { status?: unknown }).status === 400 &&
    Array.isArray((err as { errors?: unknown }).errors)
  );
}

const inBody = (path: string | undefined) => path !== undefined && /^\/body(\/|$)/.test(toPointer(path));

/**
 * Mount just before the global error handler. The contract validator rejects a schema-invalid
 * body with a 400 that stops at the schema; the contract promises a 422 that lists every
 * problem of the workflow, schema-level and semantic, `name` and `description` included, at
 * once. When every failure of createWorkflow or updateWorkflow lies in the body, this
 * re-validates the raw body and, if its graph has problems, throws that 422 (or the 404 / 412 an
 * update would have met first). A body whose only problems are outside the graph is a 422 too:
 * the body is the workflow, and a Prism mock of openapi.yaml answers any request failing
 * validation with the operation's 422, so the mock and the service agree. A bad path parameter
 * or header passes on (400).
 */
export function workflowValidationErrors(ctx: AppContext): ErrorRequestHandler {
  return (err, req, _res, next) => {
    const operationId = (req as Request & { openapi?: { schema?: { operationId?: string } } }).openapi?.schema
      ?.operationId;
    if (
      (operationId !== 'createWorkflow' && operationId !== 'updateWorkflow') ||
      !isRequestValidationError(err) ||
      !err.errors?.length ||
      !err.errors.every((e) => inBody(e.path)) ||
      req.principal?.kind !== 'apiKey'
    ) {
      next(err);
      return;
    }
    const contractProblems = err.errors.map((e) => ({
      pointer: toPointer(e.path).replace(/^\/body/, '') || '/',
      message: e.message ?? 'is invalid',
    }));
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
      next(service.invalidWorkflow(contractProblems));
      return;
    }
    const body = req.body as Record<string, unknown>;
    // Route params are not set in app-level error middleware; the validator's match is.
    const pathParams = (req as Request & { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams;
    const fields = validateWorkflowFields(body, operationId === 'createWorkflow' ? 'create' : 'update');
    const explain = async () => {
      try {
        if (operationId === 'createWorkflow')
          await service.assertValidWorkflowGraph(ctx, userOf(req), undefined, body.nodes ?? [], body.edges ?? []);
        else {
          // Only the graph: the other fields failed the contract (a `name` of another type would
          // break the update's own handling) and are reported from `fields`.
          const graph = {
            ...(body.nodes !== undefined && { nodes: body.nodes }),
            ...(body.edges !== undefined && { edges: body.edges }),
          };
          await service.prepareUpdate(
            ctx,
            userOf(req),
            String(pathParams?.workflow_id),
            graph as UpdateBody,
            ifMatchOf(req),
          );
        }
      } catch (problem) {
        // The graph's problems and the other fields' in one answer.
        if (problem instanceof Problem && problem.status === 422 && problem.errors)
          throw service.invalidWorkflow([...fields, ...problem.errors]);
        throw problem;
      }
    };
    // No graph problem: the other fields' problems in our words, else the contract's.
    explain().then(() => next(service.invalidWorkflow(fields.length ? fields : contractProblems)), next);
  };
}
