import { createServer, type RequestListener, type Server } from 'node:http';
import { headersTooLarge } from '../shared/errors.ts';

/**
 * Request line and headers up to 64 KiB (Node's default is 16 KiB). The longest valid
 * authorization request (a 2,000-character `state` and `redirect_uri` of 4-byte characters, each
 * 12 bytes percent-encoded) is about 50 KB; it must be served, not refused by the parser.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

function rawResponse(status: string, contentType?: string, body = ''): string {
  const head = [`HTTP/1.1 ${status}`, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`];
  if (contentType) head.push(`Content-Type: ${contentType}`);
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** How long a client may take, in ms (config HTTP_*_TIMEOUT_SECONDS; docs/operating.md "Storage quotas"). */
export interface SocketTimeouts {
  /** To send a request's line and headers (Node's `headersTimeout`): a socket that sends nothing, or dribbles, gets 408 and closes. */
  headersMs: number;
  /** To send a whole request, body included (`requestTimeout`). */
  requestMs: number;
  /** An idle kept-alive socket lives this long between requests (`keepAliveTimeout`). */
  keepAliveMs: number;
}

/** The configuration's defaults (src/config.ts), for a server made without a configuration (tests). */
export const DEFAULT_SOCKET_TIMEOUTS: SocketTimeouts = { headersMs: 20_000, requestMs: 30_000, keepAliveMs: 65_000 };

/**
 * The service's HTTP server. A request whose headers are over the limit never reaches express;
 * Node would answer an empty-bodied 431. We answer the documented problem+json instead, and the
 * other parser errors the way Node does.
 *
 * Timeouts are set on purpose (a red team held 3,000 idle sockets from one address for 40-60 s):
 * Node checks them every `connectionsCheckingInterval` (30 s by default, so a 20 s headers timeout
 * let a silent socket live up to 50 s); here the check runs every second at most, so a socket
 * closes within a second of its timeout. Node refuses a headers timeout longer than the request
 * timeout: it is cut to it.
 */
export function createHttpServer(app?: RequestListener, timeouts: SocketTimeouts = DEFAULT_SOCKET_TIMEOUTS): Server {
  const requestTimeout = timeouts.requestMs;
  const headersTimeout = Math.min(timeouts.headersMs, requestTimeout);
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      requestTimeout,
      headersTimeout,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(headersTimeout / 2))),
    },
    app,
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      const problem = headersTooLarge(MAX_HEADER_BYTES).body();
      socket.end(
        rawResponse('431 Request Header Fields Too Large', 'application/problem+json', JSON.stringify(problem)),
      );
      return;
    }
    socket.end(rawResponse(err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request'));
  });
  return server;
}
