/** What a helper answers: the body of a success, or the error body with the response either way. */
export type Result<T, E> =
  { data: T; error?: undefined; response: Response } | { data?: undefined; error: E; response: Response };

/** A streamed answer that broke after it started (a closed connection, or an error event). */
export class StreamError extends Error {
  /** The error event's body, when the stream ended with one. */
  readonly body: unknown;
  constructor(message: string, body?: unknown) {
    super(message);
    this.name = 'StreamError';
    this.body = body;
  }
}
