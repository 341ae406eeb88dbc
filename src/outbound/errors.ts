/** How an outbound request failed: also the run error `code` an http_request node fails with. */
export type OutboundFailure =
  | 'http_refused' // the host or an address it resolves to is refused (or a redirect led there)
  | 'http_timeout' // no whole answer within the time bound
  | 'http_response_too_large' // the body passed the size bound
  | 'http_invalid_url' // not an http(s) URL we will call
  | 'http_too_many_redirects'
  | 'http_error'; // the connection failed (DNS, refused, reset, TLS)

export class OutboundError extends Error {
  readonly code: OutboundFailure;
  constructor(code: OutboundFailure, message: string) {
    super(message);
    this.name = 'OutboundError';
    this.code = code;
  }
}
