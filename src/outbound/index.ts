// Outbound requests from user code: the guard that keeps them out of the operator's network.
export { refusalOf, embeddedIPv4, type RefusalReason } from './addresses.ts';
export { parseAllowHosts, allowListOf, type AllowList } from './allowList.ts';
export { OutboundError, type OutboundFailure } from './errors.ts';
export {
  outboundRequest,
  guardedLookup,
  checkUrl,
  type OutboundPolicy,
  type OutboundRequest,
  type OutboundResponse,
  type Resolver,
} from './request.ts';
