// The route that runs one node alone on pinned data (openapi.yaml testWorkflowNode; nodeTest.ts).
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import type { Operations } from '../http/operations.ts';
import type { SharedRateLimiter } from '../http/sharedRateLimiter.ts';
import { principalOf } from '../http/principal.ts';
import { testNode } from './nodeTest.ts';
import { userOf, workflowIdOf } from './routeParams.ts';

type NodeTestBody = NonNullable<operations['testWorkflowNode']['requestBody']>['content']['application/json'];
type NodeTestAnswer = operations['testWorkflowNode']['responses'][200]['content']['application/json'];

export function nodeTestOperations(ctx: AppContext, runStarts: SharedRateLimiter): Operations {
  async function testWorkflowNode(req: Request, res: Response<NodeTestAnswer>) {
    const owner = { userId: userOf(req), workflowId: workflowIdOf(req) };
    const body = (req.body ?? {}) as NodeTestBody;
    // A client that leaves stops its test: no provider call goes on for an answer nobody reads.
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const keyId = principalOf(req, 'apiKey').accessTokenId;
    const result = await testNode(ctx, owner, String(req.params.node_id), body, runStarts, gone.signal, keyId);
    res.status(200).json({ data: result });
  }

  return { testWorkflowNode };
}
