// A client's https server publishing Client ID Metadata Documents, for tests: a self-signed
// certificate for localhost (and 127.0.0.1) that this process trusts (tls.setDefaultCACertificates,
// which the outbound guard's https requests use), each path answered as the test sets it, and every
// request counted. The service reaches it through WORKFLOW_HTTP_ALLOW_HOSTS=localhost, as an
// operator allows an internal host.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';

// Valid for a hundred years from 2026-11-28; a test key, nothing else trusts it.
const CERT = `-----BEGIN CERTIFICATE-----
MIIBmjCCAUGgAwIBAgIUdBTVl3G4pjE37BgzWt6jBvidwZowCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyODEzMzUxOVoYDzIxMjYxMTA0
MTMzNTE5WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASwPyZv304lfMXQllZnJCfSJIgwwEsKo9odXrdNe03seric9igHKU7g
Ngn0wkY0h947xLDpZ2RHGwWaeJg1RK77o28wbTAdBgNVHQ4EFgQUgidZu8WSQg0G
J2jq+NDcgel0c6wwHwYDVR0jBBgwFoAUgidZu8WSQg0GJ2jq+NDcgel0c6wwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDRwAwRAIgUUSB//X/htlccD4/6HaJX+jfh93Jq1HqLuDLzOq1HCgCICeb
qkJrZZXyEF+kWWeZi1fZlBnS5TwganUFuugZkYwv
-----END CERTIFICATE-----`;
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg1ZDtnSQuRZfH68tn
PDt2GkAD41C4/NyKX74Fjk3X6kihRANCAASwPyZv304lfMXQllZnJCfSJIgwwEsK
o9odXrdNe03seric9igHKU7gNgn0wkY0h947xLDpZ2RHGwWaeJg1RK77
-----END PRIVATE KEY-----`;

export interface DocumentAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

export interface MetadataDocumentServer {
  /** https://localhost:PORT */
  origin: string;
  /** Sets what a path answers: a DocumentAnswer, or an object sent as JSON with status 200. */
  serve(path: string, answer: DocumentAnswer | Record<string, unknown>): void;
  /** Requests received per path. */
  hits(path: string): number;
  /** The Accept header of the last request to a path. */
  lastAccept(path: string): string | undefined;
  close(): Promise<void>;
}

let trusted = false;

export async function startMetadataDocumentServer(): Promise<MetadataDocumentServer> {
  if (!trusted) {
    setDefaultCACertificates([...getCACertificates('default'), CERT]);
    trusted = true;
  }
  const answers = new Map<string, DocumentAnswer>();
  const counts = new Map<string, number>();
  const accepts = new Map<string, string | undefined>();
  const server: Server = createServer({ cert: CERT, key: KEY }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    accepts.set(path, req.headers.accept);
    const answer = answers.get(path);
    if (!answer) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://localhost:${port}`,
    serve(path, answer) {
      const isAnswer = typeof answer.body === 'string' || Buffer.isBuffer(answer.body);
      answers.set(path, isAnswer ? (answer as DocumentAnswer) : { body: JSON.stringify(answer) });
    },
    hits: (path) => counts.get(path) ?? 0,
    lastAccept: (path) => accepts.get(path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
