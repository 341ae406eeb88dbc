import { tracedChat } from '../shared/tracing.ts';
import type { ChatRequest, ChatResult, ModelRouter, ProviderError } from './providers/index.ts';

/** The router with a GenAI client span per provider attempt (src/shared/tracing.ts); a no-op without the SDK. */
export function tracedModels(models: ModelRouter): ModelRouter {
  return {
    ...models,
    complete: (request) =>
      tracedChat<ProviderError, ChatRequest, ChatResult>(
        request,
        models.inProcess(request.model) ? 'in_process' : 'openai',
        (r) => models.complete(r),
      ),
  };
}
