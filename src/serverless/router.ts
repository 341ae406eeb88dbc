import type { AppContext } from '../context.ts';
import { createModelRouter } from '../runs/providers/index.ts';
import { openAIJson, type ErrorSurface } from '../http/errorDialects.ts';
import type { Operations } from '../http/operations.ts';
import { createChatCompletion } from './chatCompletions.ts';

/** The gateway answers errors in OpenAI's shape, which OpenAI SDKs parse. */
export const serverlessErrors: ErrorSurface = { paths: /^\/serverless\//, dialect: openAIJson };

/** The OpenAI-compatible serverless gateway (security: proxyToken or apiKey in openapi.yaml). */
export function serverlessOperations(ctx: AppContext): Operations {
  const { MODEL_PROVIDER_BASE_URL, MODEL_PROVIDER_API_KEY, MODEL_PROVIDER_MODELS } = ctx.config;
  const models = createModelRouter({
    MODEL_PROVIDER_BASE_URL,
    MODEL_PROVIDER_API_KEY,
    // Unset means every model the built-in ones do not serve goes to the configured provider.
    MODEL_PROVIDER_MODELS: MODEL_PROVIDER_MODELS.length ? [...MODEL_PROVIDER_MODELS] : undefined,
  });
  return { createChatCompletion: createChatCompletion(ctx, models) };
}
