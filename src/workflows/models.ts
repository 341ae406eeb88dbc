// The models a workflow's llm_call and agent nodes may name (GET /api/workflows/models, the
// editor's model menu), and the fixed list a graph is checked against when there is one. One
// function, so what the listing offers and what a save accepts cannot drift apart.
import type { components } from '../../generated/api.d.ts';
import { DEMO_MODELS } from '../shared/demoModels.ts';
import type { AppContext } from '../context.ts';

export type WorkflowModelList = components['schemas']['WorkflowModelList'];
type ModelConfig = Pick<AppContext['config'], 'DEMO_MODELS' | 'MODEL_PROVIDER_BASE_URL' | 'MODEL_PROVIDER_MODELS'>;

const DEMO_WORDS: Record<string, string> = {
  'echo-slow': 'Demo: echo, streamed slowly (watch tokens arrive).',
  'echo-fail': 'Demo: always fails (see how a failed node looks).',
};

/**
 * The served models, built-in ones first: `echo`, the demo models when DEMO_MODELS is on, then
 * the configured provider's list (without its `*`). `accepts_other_models`: the provider serves
 * any name (no list, or `*` in it), so a graph may name one not listed.
 */
export function servedModels(config: ModelConfig): WorkflowModelList {
  const list = config.MODEL_PROVIDER_MODELS;
  const provider = config.MODEL_PROVIDER_BASE_URL ? list.filter((m) => m !== '*') : [];
  return {
    data: [
      { id: 'echo', provider: 'built_in', description: 'Answers with its prompt: no provider, no cost.' },
      ...(config.DEMO_MODELS ? DEMO_MODELS : []).map((id) => ({
        id,
        provider: 'demo',
        description: DEMO_WORDS[id] ?? 'Demo: fails the first attempts, then answers as echo (see retries).',
      })),
      ...provider
        .filter((id) => id !== 'echo')
        .map((id) => ({
          id,
          provider: 'openai_compatible',
          description: 'Served by the configured OpenAI-compatible provider.',
        })),
    ],
    accepts_other_models: Boolean(config.MODEL_PROVIDER_BASE_URL) && (!list.length || list.includes('*')),
  };
}
