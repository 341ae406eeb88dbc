import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import { refusalOf } from './addresses.ts';
import type { AllowList } from './allowList.ts';
import { OutboundError } from './errors.ts';

/** Resolves a host name to every address it has (dns.lookup, so /etc/hosts too). Tests inject one. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface OutboundPolicy {
  allow: AllowList;
  resolve?: Resolver;
}

export interface OutboundRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The whole exchange, redirects and body included. */
  timeoutMs: number;
  /** Largest response body taken; a longer one fails with http_response_too_large. */
  maxBytes: number;
  /** Redirects followed (each hop checked again); 0 returns the 3xx itself. */
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Where the answer came from, after redirects. */
  url: string;
}

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

const ALLOW_HINT = 'an operator may allow it in WORKFLOW_HTTP_ALLOW_HOSTS';

/**
 * Throws when user code may not reach this address (the allow-list aside). An IP literal is named
 * with its kind; a host name is not followed by what it resolved to: a run's error is shown to its
 * user, and naming the private address (or the kind of network) an internal name resolves to
 * would map the operator's network for them, one refused request per name.
 */
function checkAddress(policy: OutboundPolicy, host: string, address: string) {
  if (policy.allow.allowsAddress(address)) return;
  const reason = refusalOf(address);
  if (!reason) return;
  if (host === address)
    throw new OutboundError(
      'http_refused',
      `${address} is a ${reason} address: outbound requests may not reach it (${ALLOW_HINT}).`,
    );
  throw new OutboundError(
    'http_refused',
    `The host ${host} is refused: outbound requests may reach only public addresses (${ALLOW_HINT}).`,
  );
}

/**
 * The lookup the socket connects with: the addresses checked are the ones connected to, so a name
 * that answered a public address to an earlier check and a private one now (DNS rebinding) is
 * refused here, at connect time. Every address of the name must pass, not only the first.
 */
export function guardedLookup(policy: OutboundPolicy): LookupFunction {
  const resolve = policy.resolve ?? systemResolver;
  return (hostname, options, callback) => {
    resolve(hostname)
      .then((found) => {
        const addresses = found.filter(
          (a) => options.family === undefined || options.family === 0 || a.family === options.family,
        );
        if (addresses.length === 0) throw new OutboundError('http_error', `${hostname} has no address.`);
        for (const a of addresses) checkAddress(policy, hostname, a.address);
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, ''));
  };
}

/** The URL, when it is one user code may call: http(s), no credentials in it, a permitted IP literal. */
export function checkUrl(policy: OutboundPolicy, text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundError('http_invalid_url', `Not a URL: ${JSON.stringify(text.slice(0, 200))}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundError('http_invalid_url', `Only http and https URLs are called, not ${url.protocol}.`);
  if (url.username || url.password)
    throw new OutboundError('http_invalid_url', 'A URL may not carry credentials: send them in a header.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // An IP literal never goes through the lookup: check it here.
  if (isIP(host) && !policy.allow.allowsHost(host)) checkAddress(policy, host, host);
  return url;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Kept on a redirect to another origin: anything else may carry a credential meant for the first.
const CROSS_ORIGIN_SAFE = new Set(['accept', 'accept-language', 'content-type', 'user-agent']);

/** One request and its bounded body. */
function exchange(
  policy: OutboundPolicy,
  url: URL,
  request: OutboundRequest,
  signal: AbortSignal,
): Promise<OutboundResponse> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const trusted = policy.allow.allowsHost(url.hostname.replace(/^\[|\]$/g, ''));
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: request.method,
      headers: request.headers,
      signal,
      agent: false, // a fresh connection per request: no pooled socket outlives the check of its address
      ...(trusted ? {} : { lookup: guardedLookup(policy) }),
    });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      readBounded(res, request.maxBytes).then(
        (body) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, url: url.href }),
        (error: unknown) => {
          req.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
    req.end(request.body);
  });
}

async function readBounded(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const tooLarge = (maxBytes: number) =>
  new OutboundError('http_response_too_large', `The response body is larger than ${maxBytes} bytes.`);

/** Why a request failed, as an OutboundError. */
function outboundFailure(error: unknown, timeout: AbortSignal, timeoutMs: number): Error {
  if (error instanceof OutboundError) return error;
  if (timeout.aborted) return new OutboundError('http_timeout', `No whole answer within ${timeoutMs / 1000} s.`);
  const err = error as NodeJS.ErrnoException;
  if (err.name === 'AbortError') return err; // the caller's signal: cancelled, not failed
  return new OutboundError('http_error', `The request failed: ${err.code ?? err.message}.`);
}

/**
 * An HTTP request from user code (an http_request node, a webhook) to the outside world, never to
 * the operator's own network unless the operator allow-listed it: refused addresses (src/outbound/
 * addresses.ts) are checked at connect time on every hop, redirects included; the exchange is
 * bounded in time (timeoutMs, all hops and the body) and size (maxBytes).
 */
export async function outboundRequest(policy: OutboundPolicy, request: OutboundRequest): Promise<OutboundResponse> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
  let url = checkUrl(policy, request.url);
  let current: OutboundRequest = { ...request, headers: { ...request.headers } };
  try {
    for (let hop = 0; ; hop++) {
      const response = await exchange(policy, url, current, signal);
      const location = response.headers.location;
      if (!REDIRECTS.has(response.status) || !location || (request.maxRedirects ?? 5) === 0) return response;
      if (hop >= (request.maxRedirects ?? 5))
        throw new OutboundError('http_too_many_redirects', `More than ${request.maxRedirects ?? 5} redirects.`);
      const next = checkUrl(policy, new URL(location, url).href);
      current = redirected(current, response.status, url, next);
      url = next;
    }
  } catch (error) {
    throw outboundFailure(error, timeout, request.timeoutMs);
  }
}

/** The request a redirect asks for (RFC 9110 15.4): 303, and 301/302 after a POST, become a GET without body. */
function redirected(request: OutboundRequest, status: number, from: URL, to: URL): OutboundRequest {
  const toGet = status === 303 || ((status === 301 || status === 302) && request.method.toUpperCase() === 'POST');
  let headers = { ...request.headers };
  if (from.origin !== to.origin)
    headers = Object.fromEntries(Object.entries(headers).filter(([name]) => CROSS_ORIGIN_SAFE.has(name.toLowerCase())));
  if (toGet)
    headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type'));
  return toGet ? { ...request, method: 'GET', body: undefined, headers } : { ...request, headers };
}
