import type { ChatRequest, ChatResult, ModelProvider } from './types.ts';

/** Counts words, as a stand-in for tokens: `echo` has no tokenizer and claims none. */
export function countWords(text: string): number {
  const words = text.trim().split(/\s+/);
  return words[0] === '' ? 0 : words.length;
}

/**
 * The built-in `echo` model: deterministic, offline, for demos and tests. It answers with the last
 * user message, cut to `max_tokens` words. It is not a language model and does not pretend to be.
 */
export const echoProvider: ModelProvider = {
  name: 'echo',
  inProcess: true,
  serves: (model) => model === 'echo',
  async complete(request: ChatRequest): Promise<ChatResult> {
    request.signal?.throwIfAborted();
    request.onAttempt?.(1);
    const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
    let content = lastUser?.content ?? '';
    let finishReason = 'stop';
    if (request.max_tokens !== undefined && countWords(content) > request.max_tokens) {
      content = content.trim().split(/\s+/).slice(0, request.max_tokens).join(' ');
      finishReason = 'length';
    }
    // Streamed word by word (each with the spaces after it), as a model streams tokens.
    if (request.onDelta) {
      for (const piece of content.match(/\s*\S+\s*/g) ?? []) {
        const behind = request.onDelta(piece);
        if (behind) await behind;
      }
    }
    const prompt = request.messages.reduce((n, m) => n + countWords(m.content ?? ''), 0);
    const completion = countWords(content);
    return {
      model: 'echo',
      content,
      finishReason,
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    };
  },
};
