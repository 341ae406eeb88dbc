// What the load generators (bench/load.ts, bench/scaleLoad.ts) share: one request on a keep-alive
// agent, its whole body read, and the percentile of sorted latencies.
import http from 'node:http';

export interface Reply {
  status: number;
  body: string;
}

/** The p-th percentile (nearest rank) of ascending values; NaN for none. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Sends requests on `agent` to any base URL and resolves with the status and the whole body. */
export function sender(agent: http.Agent) {
  const parsed = new Map<string, URL>(); // parsed once per base: the generator's CPU is measured too
  return (
    baseUrl: string,
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<Reply> =>
    new Promise((resolve, reject) => {
      let base = parsed.get(baseUrl);
      if (!base) parsed.set(baseUrl, (base = new URL(baseUrl)));
      const req = http.request(
        {
          host: base.hostname,
          port: base.port,
          method,
          path,
          agent,
          headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
