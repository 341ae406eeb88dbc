import type { AppContext } from '../context.ts';
import { modelRouterFor } from '../runs/machinery.ts';
import { openAIJson, type ErrorSurface } from '../http/errorDialects.ts';
import type { Operations } from '../http/operations.ts';
import { createChatCompletion } from './chatCompletions.ts';

/** The gateway answers errors in OpenAI's shape, which OpenAI SDKs parse. */
export const serverlessErrors: ErrorSurface = { paths: /^\/serverless\//, dialect: openAIJson };

/** The OpenAI-compatible serverless gateway (security: proxyToken or apiKey in openapi.yaml). */
export function serverlessOperations(ctx: AppContext): Operations {
  // The same models as a workflow's llm_call nodes: echo, the demo models when DEMO_MODELS is on
  // (so a gateway call can stream slowly or fail on purpose with no provider), then the configured one.
  const models = modelRouterFor(ctx.config);
  return { createChatCompletion: createChatCompletion(ctx, models) };
}
