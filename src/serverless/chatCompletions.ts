import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { principalOf } from '../http/principal.ts';
import { maxTokensTooLarge, modelNotFound, upstreamError } from '../shared/errors.ts';
import { ModelUnavailableError, ProviderError, type ChatResult, type ModelRouter } from '../runs/providers/index.ts';

type ChatCompletionRequest = components['schemas']['ChatCompletionRequest'];
type ChatCompletion = components['schemas']['ChatCompletion'];

/**
 * 24 random hex digits. From randomUUID, which draws on a batch of entropy it refills every 128
 * ids: randomBytes(12) read fresh entropy on every completion, 4% of the gateway's CPU (issue 19).
 */
const completionId = () => randomUUID().replace(/-/g, '').slice(0, 24);

function toCompletion(result: ChatResult): ChatCompletion {
  return {
    id: `chatcmpl-${completionId()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: result.model,
    choices: [{ index: 0, message: { role: 'assistant', content: result.content }, finish_reason: result.finishReason }],
    usage: result.usage,
  };
}

/**
 * POST /serverless/v1/chat/completions: an OpenAI-compatible completion through the model
 * providers, for a proxy token or a raw access token (the security handlers established which).
 * Usage is attributed to the raw access token: logged with its id and usage_scenario, never a token.
 */
export function createChatCompletion(ctx: AppContext, models: ModelRouter): RequestHandler {
  return async (req, res) => {
    const principal = principalOf(req, 'proxy', 'apiKey');
    const body = req.body as ChatCompletionRequest;
    if (!models.has(body.model)) throw modelNotFound(body.model);
    // The same ceiling as an llm_call node's max_tokens: one operator setting bounds what any caller asks a provider for.
    if (body.max_tokens !== undefined && body.max_tokens > ctx.config.WORKFLOW_MAX_TOKENS_LIMIT) {
      throw maxTokensTooLarge(body.max_tokens, ctx.config.WORKFLOW_MAX_TOKENS_LIMIT);
    }

    // The caller hanging up cancels the provider call.
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const started = Date.now();
    let result: ChatResult;
    try {
      result = await models.complete({
        model: body.model,
        messages: body.messages,
        ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
        ...(body.max_tokens !== undefined ? { max_tokens: body.max_tokens } : {}),
        signal: abort.signal,
      });
    } catch (err) {
      if (err instanceof ModelUnavailableError) throw modelNotFound(body.model);
      if (err instanceof ProviderError) {
        ctx.logger.warn({ err: { message: err.message, status: err.status }, model: body.model }, 'model provider failed');
        throw upstreamError();
      }
      throw err;
    }

    ctx.logger.info(
      {
        serverless_usage: {
          access_token_id: principal.accessTokenId,
          user_id: principal.userId,
          namespace: principal.namespace,
          usage_scenario: principal.usageScenario,
          via: principal.kind === 'proxy' ? 'proxy_token' : 'api_key',
          ...(principal.kind === 'proxy' ? { client_id: principal.clientId, jti: principal.jti } : {}),
          model: result.model,
          ...result.usage,
          duration_ms: Date.now() - started,
        },
      },
      'serverless completion',
    );
    res.json(toCompletion(result));
  };
}
