// Server-Sent Events answers (HTML Living Standard 9.2), for the run event stream
// (runs/eventStream.ts) and the gateway's streamed completions (serverless/chatCompletions.ts).
import type { ServerResponse } from 'node:http';

/** Status 200 and an event stream's headers; the frames follow. */
export function startEventStream(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no'); // nginx: pass each event on at once
}

/**
 * Writes one frame. When the socket is behind (`res.write` answered false), the promise returned
 * settles on 'drain' or on the client leaving, and the caller waits for it before producing more:
 * a slow reader slows the source down instead of growing this process's buffer without bound.
 * Writes nothing once the answer ended or the client left.
 */
export function writeFrame(res: ServerResponse, frame: string): Promise<void> | undefined {
  if (res.writableEnded || res.destroyed) return undefined;
  if (res.write(frame)) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}
