export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  /** Aborts the call (run cancelled, run timed out, client gone). */
  signal?: AbortSignal;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatResult {
  model: string;
  content: string;
  finishReason: string | null;
  usage: Usage;
}

export interface ModelProvider {
  readonly name: string;
  serves(model: string): boolean;
  complete(request: ChatRequest): Promise<ChatResult>;
}

/** No provider serves the model. */
export class ModelUnavailableError extends Error {
  readonly model: string;
  constructor(model: string) {
    super(`No provider serves the model "${model}".`);
    this.model = model;
  }
}

/** The provider failed (after retries), or answered something that is not a completion. */
export class ProviderError extends Error {
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}
