// Just enough of the two untyped devDependencies the benchmark drives.

declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
  }
  interface Histogram {
    p50: number;
    p99: number;
    average: number;
  }
  interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}

declare module 'oidc-provider' {
  import type { Server } from 'node:http';
  class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    listen(port: number, host: string): Server;
  }
  export default Provider;
}
