// What bench/run.ts hands bench/load.ts (as a JSON file) and what it answers (one JSON line).
import type { Usage } from './usage.ts';

interface Common {
  connections: number;
  durationSeconds: number;
}

export type LoadSpec =
  | (Common & {
      kind: 'fixed';
      url: string;
      method: 'GET' | 'POST';
      headers: Record<string, string>;
      body?: string;
      /** Latencies to the microsecond (the small generator) instead of autocannon's whole milliseconds: for a ratio of two p50s below 1 ms. */
      subMillisecond?: boolean;
    })
  | (Common & { kind: 'refresh'; url: string; authorization: string; refreshTokens: string[] })
  /** GET `url` with a DPoP-bound access token: a fresh proof (RFC 9449) signed with `privateJwk` for every request. */
  | (Common & { kind: 'dpop'; url: string; accessToken: string; privateJwk: JsonWebKey; publicJwk: JsonWebKey })
  | (Common & {
      kind: 'codes';
      url: string;
      authorization: string;
      redirectUri: string;
      codes: string[];
      /** PKCE (RFC 7636): the codes' verifier. */ codeVerifier?: string;
    })
  | (Common & {
      kind: 'runs';
      baseUrl: string;
      apiKey: string;
      workflowId: string;
      inputs: Record<string, string>;
      pollMs: number;
      /** Seconds of `Prefer: wait` on the POST (and a GET if it answers 202) instead of polling; undefined: poll every pollMs. */
      waitSeconds?: number | undefined;
    })
  /** A webhook that answers when its workflow has ended (row 9's n8n): POST `body`, 200 with `expect` in the answer. */
  | (Common & { kind: 'webhook'; url: string; body: string; expect: string })
  /** Row 10 (bench/scaleLoad.ts): `connections` clients with `Prefer: wait` over two API processes, and `observers` reading runs' events on the other one. */
  | (Common & {
      kind: 'scale';
      apis: [string, string];
      apiKey: string;
      workflowId: string;
      inputs: Record<string, string>;
      observers: number;
      waitSeconds: number;
    });

export interface LoadResult {
  /** Completed requests (for runs: completed or failed runs). */
  requests: number;
  rps: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  /** Transport errors, timeouts and answers other than the expected 2xx (for runs: failed runs). */
  errors: number;
  seconds: number;
  note?: string | undefined;
  /** Where the time went (bench/probes.ts), added by the bench around the load. */
  usage?: Usage | undefined;
}
