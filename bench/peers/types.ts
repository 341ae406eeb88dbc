// A peer the OAuth rows (1. refresh grant, 3. user info) measure beside the service: each peer
// answers the same load in the same run, and its row shows ours ÷ it. Add one by writing a module
// in bench/peers/ and adding it to the list in bench/run.ts.
import { basic } from '../oauthFlow.ts';

export interface OAuthPeerInstance {
  /** Refresh chains: the token endpoint, its client authentication, one refresh token per connection. */
  refresh: { url: string; authorization: string; refreshTokens: string[] };
  /** User info with a valid access token. */
  userinfo: { url: string; headers: Record<string, string> };
  /** The processes that serve it (their CPU is the peer's). */
  pids: number[];
  stop(): Promise<void>;
}

export interface OAuthPeer {
  /** As the table shows it, e.g. 'oidc-provider (memory)'. */
  name: string;
  /** The goal of ours ÷ this peer, per row, e.g. '≥ 1.2x'. */
  targets: { refresh: string; userinfo: string };
  /**
   * A fresh instance, ready for one load with `connections` chains; a string says why it cannot
   * run on this machine (shown in its row, the bench goes on).
   */
  start(connections: number): Promise<OAuthPeerInstance | string>;
}

/** What a peer mints for loads 1 and 3 through a real authorization-code flow (bench/peer.ts prints it). */
export interface MintedTokens {
  tokenUrl: string;
  userinfoUrl: string;
  clientId: string;
  clientSecret: string;
  refreshTokens: string[];
  accessToken: string;
}

/** The loads' view of a peer's minted tokens, served by `pids`. */
export function peerInstance(minted: MintedTokens, pids: number[], stop: () => Promise<void>): OAuthPeerInstance {
  return {
    refresh: {
      url: minted.tokenUrl,
      authorization: basic(minted.clientId, minted.clientSecret),
      refreshTokens: minted.refreshTokens,
    },
    userinfo: { url: minted.userinfoUrl, headers: { authorization: `Bearer ${minted.accessToken}` } },
    pids,
    stop,
  };
}
