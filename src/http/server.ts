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

/**
 * The service's HTTP server. A request whose headers are over the limit never reaches express;
 * Node would answer an empty-bodied 431. We answer the documented problem+json instead, and the
 * other parser errors the way Node does.
 */
export function createHttpServer(app?: RequestListener): Server {
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app);
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      const problem = headersTooLarge(MAX_HEADER_BYTES).body();
      socket.end(rawResponse('431 Request Header Fields Too Large', 'application/problem+json', JSON.stringify(problem)));
      return;
    }
    socket.end(rawResponse(err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request'));
  });
  return server;
}
