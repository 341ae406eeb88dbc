// A Server-Sent Events reader (WHATWG HTML 9.2.6, "Interpreting an event stream") over a fetch
// body, for Node >= 20 and browsers alike: no EventSource (it cannot send an Authorization
// header) and no Node streams.

export interface ServerSentEvent {
  /** The `id:` of the event, or the last one seen before it (the spec's "last event ID"). */
  id: string;
  /** The `event:` name; `message` when the event names none. */
  event: string;
  data: string;
}

/** Reads the events of a `text/event-stream` body in order; comments and empty events are skipped. */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const abort = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', abort, { once: true });
  let buffer = '';
  let lastId = '';
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return; // an event without its blank line is dropped, as the spec says
      buffer += decoder.decode(value, { stream: true });
      // Lines end in \n or \r\n (a lone \r, which no server we know sends, is not split on).
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const rawLine of lines) {
        const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
        if (line === '') {
          if (data.length > 0) yield { id: lastId, event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? '' : line.slice(colon + 1);
        const text = raw.startsWith(' ') ? raw.slice(1) : raw;
        if (field === 'data') data.push(text);
        else if (field === 'event') event = text;
        else if (field === 'id' && !text.includes('\0')) lastId = text;
      }
    }
  } finally {
    signal?.removeEventListener('abort', abort);
    reader.releaseLock();
  }
}
