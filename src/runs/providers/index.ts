import { echoProvider } from './echo.ts';
import { openAICompatibleProvider } from './openaiCompatible.ts';
import { costOf, type CostNanos, type PriceTable } from '../../shared/prices.ts';
import { ModelUnavailableError, type ChatRequest, type ChatResult, type ModelProvider, type Usage } from './types.ts';

export * from './types.ts';

export interface ModelRouter {
  /** True when some provider serves the model. */
  has(model: string): boolean;
  /** True when the model's provider answers in this process, calling nothing outside it. */
  inProcess(model: string): boolean;
  complete(request: ChatRequest): Promise<ChatResult>;
  /** What these tokens of `model` cost at the price table (null: no table, or the model is not in it; the service's own models are free). */
  cost(model: string, usage: Usage): CostNanos | null;
  /** True when the price table names the model. */
  priced(model: string): boolean;
  /**
   * The model's name as a metrics label: kept for a model the price table names, the service serves
   * itself or the operator listed (MODEL_PROVIDER_MODELS), "other" for any name a workflow made up.
   */
  metricsLabel(model: string): string;
}

export interface ProviderSettings {
  MODEL_PROVIDER_BASE_URL?: string | undefined;
  MODEL_PROVIDER_API_KEY?: string | undefined;
  MODEL_PROVIDER_MODELS?: string[] | string | undefined;
  /** The operator's price table (src/shared/prices.ts); absent: no model has a cost. */
  MODEL_PRICES?: PriceTable | null;
}

/** Routes each model to the first provider that serves it: `echo` first, then the configured API. */
export function createModelRouter(settings: ProviderSettings, extra: ModelProvider[] = []): ModelRouter {
  const providers: ModelProvider[] = [echoProvider, ...extra];
  if (settings.MODEL_PROVIDER_BASE_URL) {
    const models = Array.isArray(settings.MODEL_PROVIDER_MODELS)
      ? settings.MODEL_PROVIDER_MODELS
      : (settings.MODEL_PROVIDER_MODELS ?? '*')
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean);
    providers.push(
      openAICompatibleProvider({
        baseUrl: settings.MODEL_PROVIDER_BASE_URL,
        apiKey: settings.MODEL_PROVIDER_API_KEY,
        models,
      }),
    );
  }
  const find = (model: string) => providers.find((p) => p.serves(model));
  return {
    has: (model) => find(model) !== undefined,
    inProcess: (model) => find(model)?.inProcess === true,
    cost: (model, usage) => costOf(settings.MODEL_PRICES ?? null, model, usage, find(model)?.inProcess === true),
    priced: (model) => settings.MODEL_PRICES?.models.has(model) === true,
    metricsLabel: (model) =>
      settings.MODEL_PRICES?.models.has(model) === true ||
      find(model)?.inProcess === true ||
      (Array.isArray(settings.MODEL_PROVIDER_MODELS) && settings.MODEL_PROVIDER_MODELS.includes(model))
        ? model
        : 'other',
    async complete(request) {
      const provider = find(request.model);
      if (!provider) throw new ModelUnavailableError(request.model);
      return provider.complete(request);
    },
  };
}
