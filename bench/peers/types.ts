// A peer the OAuth rows (1. refresh grant, 3. user info) measure beside the service: each peer
// answers the same load in the same run, and its row shows ours ÷ it. Add one by writing a module
// in bench/peers/ and adding it to the list in bench/run.ts.

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
