// The 400 -> 422 mapping of workflowValidationErrors, without a server: which validator errors it
// takes over and which it leaves alone.
import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../context.ts';
import { Problem, workflowNotFound } from '../shared/errors.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { workflowValidationErrors } from './router.ts';

const ctx = { config: { WORKFLOW_MAX_TOKENS_LIMIT: 4096 }, db: undefined } as unknown as AppContext;
const middleware = workflowValidationErrors(ctx);

function run(err: unknown, body: unknown, operationId = 'createWorkflow'): Promise<unknown> {
  const req = {
    body,
    principal: {
      kind: 'apiKey',
      userId: 1,
      accessTokenId: 1,
      namespace: 'a',
      usageScenario: 'paid',
      permissions: ['workflows'],
    },
    openapi: { schema: { operationId } },
    get: () => undefined,
  } as unknown as Request;
  return new Promise((resolve) => {
    const next: NextFunction = (passed?: unknown) => resolve(passed);
    void middleware(err, req, {} as Response, next);
  });
}

const validatorError = (...paths: string[]) => ({
  status: 400,
  message: 'invalid',
  errors: paths.map((path) => ({ path, message: 'x' })),
});
const badNodes = [{ id: 'a', type: 'llm_call', config: { model: 'echo', temperature: 9 } }];

describe('workflowValidationErrors', () => {
  it('turns a validator 400 confined to the graph into the full 422', async () => {
    const result = await run(validatorError('/body/nodes/0/config/temperature'), {
      name: 'x',
      nodes: badNodes,
      edges: [{ from: 'a', to: 'b' }],
    });
    expect(result).toBeInstanceOf(Problem);
    expect((result as Problem).status).toBe(422);
    expect((result as Problem).errors).toEqual([
      { pointer: '/nodes/0/config/temperature', message: 'must be <= 2' },
      {
        pointer: '/nodes/0',
        message: 'llm_call "a" has no upstream node: connect an edge into it, or give it a prompt',
      },
      { pointer: '/edges/0', message: 'edge refers to unknown node "b"' },
    ]);
  });

  it('understands the dotted path form too', async () => {
    const result = await run(validatorError('.body.nodes[0].config.temperature'), { name: 'x', nodes: badNodes });
    expect((result as Problem).status).toBe(422);
  });

  it('lists the other invalid fields of the body in the same 422', async () => {
    const err = validatorError('/body/nodes/0/config/temperature', '/body/name');
    const result = await run(err, { name: '', nodes: badNodes });
    expect((result as Problem).status).toBe(422);
    expect((result as Problem).errors![0]).toEqual({ pointer: '/name', message: 'must be 1 to 200 characters' });
  });

  it('answers 422 when the graph has no problem and only other fields are wrong (as a Prism mock does)', async () => {
    const result = await run(validatorError('/body/name'), { name: '', ...seedGraph() });
    expect((result as Problem).status).toBe(422);
    expect((result as Problem).errors).toEqual([{ pointer: '/name', message: 'must be 1 to 200 characters' }]);
  });

  it("answers 422 with the contract's problems when its own validation finds nothing to report", async () => {
    const result = await run(validatorError('/body/nodes/0'), { name: 'x', ...seedGraph() });
    expect((result as Problem).status).toBe(422);
    expect((result as Problem).errors).toEqual([{ pointer: '/nodes/0', message: 'x' }]);
  });

  it('answers 422 for a body that is not an object', async () => {
    const result = await run(validatorError('/body'), [1, 2]);
    expect((result as Problem).status).toBe(422);
  });

  it('leaves a 400 outside the body alone', async () => {
    const err = validatorError('/query/page', '/body/nodes/0');
    expect(await run(err, { name: 'x', nodes: badNodes })).toBe(err);
  });

  it('leaves other operations and other errors alone', async () => {
    const err = validatorError('/body/nodes/0/config/temperature');
    expect(await run(err, { nodes: badNodes }, 'runWorkflow')).toBe(err);
    const notFound = workflowNotFound('wf_x');
    expect(await run(notFound, { nodes: badNodes })).toBe(notFound);
  });
});
