import type OAuth2Server from '@node-oauth/oauth2-server';
import type { AppContext } from '../context.ts';
import { clientSecretMatches } from '../accounts/apps.ts';
import { hashToken, newToken, safeEqual } from '../shared/crypto.ts';
import { SealingError } from '../shared/sealing.ts';
import { revocationLease } from '../shared/principalLease.ts';
import { authenticateClient } from './clients.ts';
import { signIdToken } from './idToken.ts';
import type { TokenForm } from './grants/form.ts';
import type { Grant } from './grants/grant.ts';
import { joinScopes, splitScope } from './scopes.ts';
import * as chain from './chain.store.ts';
import * as store from './store.ts';
import { bindAccessToken } from './binding.store.ts';
import { tokenAudience } from './resources.ts';

// The knex model behind @node-oauth/oauth2-server's token endpoint, made for one request:
// OAuth2Server#token builds its handler on every call, so the model can carry the request's state.
// getClient reads the code or refresh token being exchanged together with its client's secrets (so
// authenticating the client costs no query of its own), and the grant's steps (grants/*.ts) find the
// row in hand. No transaction: the conditional consumption of a code, and the unique successor of a
// refresh token, decide on their own which of two concurrent requests wins.

/** A code as the grant reads it: the library's fields, and our row. */
export type Code = OAuth2Server.AuthorizationCode & { row: store.CodeRow };
/** A refresh token as the grant reads it: the library's fields, and our row. */
export type RefreshToken = OAuth2Server.RefreshToken & { row: store.RefreshTokenRow };
/** A new pair for saveToken; `rotates`: the refresh token it replaces (RFC 9700 4.14.2). */
export type NewPair = OAuth2Server.Token & { rotates?: number };
/** A pair with, when its scope has `openid`, the ID token that goes with it (OpenID Connect Core
 * 3.1.3.3), and the DPoP key its access token is bound to, if any (RFC 9449 5). */
export type PairWithIdToken = OAuth2Server.Token & { id_token?: string; dpopJkt?: string | null };
/** What a rotated refresh token presented within the grace window is answered with: its successor's
 * pair (the same for every presentation); or its successor was itself rotated (`olderGeneration`:
 * when), so the token is an older generation; or nothing (revoked, or no pair kept: rotated before
 * migration 0025, or sealed with a key-encryption key since retired). */
export type Replay = { pair: PairWithIdToken } | { olderGeneration: number } | 'gone';

/**
 * A grant that does not descend from a code (device flow, token exchange): whom it was granted to,
 * by which client, and its scope. Its pairs are stored without an authorization row, naming their
 * user and client themselves (migration 0026); their refreshes rotate as any other's.
 */
export interface DirectGrant {
  userId: number;
  applicationId: number;
  clientId: string;
  /** The client's id_token_signed_response_alg, for an ID token when the scope has `openid`. */
  idTokenAlg: string;
  scope: string;
  /** When the user authenticated (ms), if they did: a later ID token's auth_time. */
  authTime: number | null;
  /** RFC 8707: the resources it was authorized for (space separated); absent or null when none was named. */
  resources?: string | null;
}

/** The raw pair of a successor, as sealed with its row for the grace window. */
interface SealedPair {
  access_token: string;
  refresh_token: string;
  id_token?: string;
}

/** When each process last cleared the sealed pairs past their window (chain.store.ts clearSealedPairs). */
let lastSweep = 0;
/** How long past its window a sealed pair may wait for the sweep: no sweep clears the pair of a
 * rotation slow to commit before it records its commit (rotationSeenAt). Only a presentation within
 * the window (grants/refreshToken.ts step 4) ever opens one. */
const SWEEP_MARGIN_MS = 60_000;

export class TokenModel {
  readonly ctx: AppContext;
  readonly form: TokenForm;
  /** The grant types every client may use: the registry's (grants/registry.ts), given by the token endpoint. */
  readonly grantTypes: string[];
  /** The code or refresh token of the request, read by getClient. */
  private code: store.CodeRow | null = null;
  private refresh: store.RefreshTokenRow | null = null;
  /** The grant of a grant type that does not descend from a code, as its class established it (grantedDirectly). */
  private direct: DirectGrant | null = null;
  private readonly grant: Grant | undefined;
  /** When the request came in: a replay that came in before its token's successor was used is no reuse (grants/refreshToken.ts). */
  readonly arrivedAt = Date.now();

  /** The thumbprint of the request's DPoP proof key (checked by the token endpoint): every access token issued is bound to it. */
  readonly dpopJkt: string | null;
  private audience: string | null = null; // RFC 8707: the access tokens', as the grant set it (targetAudience)

  /** `grant`: the request's grant type, when registered: it says how the credential it presents is found. */
  constructor(ctx: AppContext, form: TokenForm, grantTypes: readonly string[], grant?: Grant, dpopJkt?: string) {
    this.ctx = ctx;
    this.form = form;
    this.grantTypes = [...grantTypes];
    this.grant = grant;
    this.dpopJkt = dpopJkt ?? null;
  }

  /**
   * RFC 6749 3.2.1: authenticates the client: a secret (2.3; with the code or refresh token of the
   * client came its secrets, so no query), or a public client's client_id alone (2.1) for the grants
   * open to it (Grant `publicClients`). RFC 6749 5.2 puts invalid_client before invalid_grant:
   * nothing about the code or token is revealed to a client that fails here.
   */
  async getClient(clientId: string, clientSecret: string | undefined): Promise<OAuth2Server.Client | null> {
    const row = await this.readGrantRow();
    if (!clientSecret) {
      const client = await authenticateClient(this.ctx, clientId, '');
      // Its stored client_id, which the code or token names (a metadata document's URL is not it).
      return client
        ? { id: client.clientId, grants: this.grant?.publicClients ? [this.grant.type] : [], isPublic: true }
        : null;
    }
    const authenticated =
      row?.clientId === clientId
        ? await clientSecretMatches(this.ctx, row.clientSecrets, clientSecret)
        : (await authenticateClient(this.ctx, clientId, clientSecret)) !== null;
    return authenticated ? { id: clientId, grants: this.grantTypes } : null;
  }

  /** The credential the request presents, found as its grant says (grants/grant.ts `presented`). */
  private async readGrantRow(): Promise<store.CodeRow | store.RefreshTokenRow | null> {
    const presented = (await this.grant?.presented?.(this.ctx.db, this.form)) ?? {};
    this.code = presented.code ?? null;
    this.refresh = presented.refreshToken ?? null;
    return this.code ?? this.refresh;
  }

  /**
   * For a grant type that does not descend from a code: the grant its class established (after
   * authenticating the client and checking what it was given), under which saveToken stores the pair.
   */
  grantedDirectly(grant: DirectGrant): void {
    this.direct = grant;
  }

  /** RFC 8707 2.2: the access token's audience, from the request's `resource` and the grant's resources. */
  targetAudience(requested: string | undefined): void {
    const granted = (this.code ?? this.refresh ?? this.direct)?.resources ?? null;
    this.audience = tokenAudience(this.ctx.config.BASE_URL, granted, requested);
  }

  /** The request's code, read with the client (getClient); null when there is none or its grant was revoked. */
  async getAuthorizationCode(authorizationCode: string): Promise<Code | null> {
    const row = this.code;
    if (!row) return null;
    return {
      authorizationCode,
      expiresAt: new Date(row.expiresAt),
      redirectUri: row.redirectUri,
      scope: splitScope(row.scope),
      codeChallenge: row.codeChallenge ?? undefined,
      codeChallengeMethod: row.codeChallengeMethod ?? undefined,
      client: { id: row.clientId, grants: this.grantTypes },
      user: { id: row.userId },
      row,
    };
  }

  /** Consumes the code: of two concurrent exchanges only the first flips used_at; false for the other. */
  async revokeAuthorizationCode(code: Code): Promise<boolean> {
    return store.markCodeUsed(this.ctx.db, code.row.id, Date.now());
  }

  /** The request's refresh token, read with the client (getClient); null when there is none. */
  async getRefreshToken(refreshToken: string): Promise<RefreshToken | null> {
    const row = this.refresh;
    if (!row) return null;
    return {
      refreshToken,
      refreshTokenExpiresAt: new Date(row.refreshExpiresAt),
      scope: splitScope(row.scope),
      client: { id: row.clientId, grants: this.grantTypes },
      user: { id: row.userId },
      row,
    };
  }

  /**
   * Revokes the chain a replayed code or a reused refresh token belongs to: the pairs that code led
   * to (code_id), refreshes included, and the proxy tokens minted through them (their `cid`), not
   * the user's other installations of the app under the same remembered consent (one authorization
   * row serves many codes). Answers once no process honours them (the principal lease).
   */
  async revokeToken(token: Code | RefreshToken, why: string): Promise<boolean> {
    const { authorizationId } = token.row;
    const codeId = 'usedAt' in token.row ? token.row.id : token.row.codeId;
    const { userId, applicationId } = token.row as store.RefreshTokenRow;
    const tokenChain: chain.Chain =
      authorizationId === null ? { authorizationId, userId, applicationId } : { authorizationId, codeId };
    await chain.revokeChain(this.ctx.db, tokenChain, Date.now());
    this.ctx.logger.warn({ authorizationId, codeId }, why);
    await revocationLease.settle();
    return true;
  }

  /** A refresh token presented again, as it stands now (after losing its rotation to a concurrent refresh). */
  async reread(token: RefreshToken): Promise<store.RefreshTokenRow | null> {
    return store.findTokenByRefreshHash(this.ctx.db, hashToken(token.refreshToken));
  }

  /** The scope asked for on refresh may only narrow the grant's (RFC 6749 6); a code's was checked at /oauth/authorize. */
  async validateScope(
    _user: OAuth2Server.User,
    _client: OAuth2Server.Client,
    scope?: string[],
  ): Promise<string[] | false> {
    const granted = splitScope(this.refresh?.scope ?? this.code?.scope ?? this.direct?.scope);
    if (scope === undefined) return granted;
    return scope.every((s) => granted.includes(s)) ? scope : false;
  }

  async generateAccessToken(): Promise<string> {
    return newToken('gho');
  }

  async generateRefreshToken(): Promise<string> {
    return newToken('ghr');
  }

  /**
   * Stores the pair as hashes only, under the grant of the code or refresh token, with the code it
   * descends from (code_id: one code's descendants are one chain). `rotates`: the pair is stored as
   * that refresh token's successor, in one statement that also checks that the token and its grant
   * stand, with its raw pair sealed for the grace window (every presentation of the rotated token
   * within it gets this same pair: successorPair); null when a concurrent refresh rotated it first
   * or either was revoked meanwhile.
   */
  async saveToken(
    token: NewPair & { id_token?: string },
    client: OAuth2Server.Client,
    user: OAuth2Server.User,
  ): Promise<OAuth2Server.Token | null> {
    const row = this.pairRow(token);
    if (token.rotates === undefined) await store.insertToken(this.ctx.db, row);
    else if (
      !(await store.insertSuccessorToken(
        this.ctx.db,
        { ...row, ...this.sealed(token, token.rotates, row.createdAt) },
        token.rotates,
      ))
    )
      return null;
    else this.sweepSealedPairs();
    // RFC 9449 5, RFC 8707: bound before it is answered (no audience asked for: the grant's resources).
    const resources = (this.code ?? this.refresh ?? this.direct)!.resources ?? null;
    await bindAccessToken(this.ctx.db, row.accessTokenHash, this.dpopJkt, resources, this.audience ?? resources);
    return this.answer({ ...token, dpopJkt: this.dpopJkt }, client, user);
  }

  /** The grace window of a rotation (REFRESH_REUSE_GRACE_SECONDS), in ms. */
  get graceWindowMs(): number {
    return this.ctx.config.REFRESH_REUSE_GRACE_SECONDS * 1000;
  }

  /**
   * The successor's raw pair sealed with the key-encryption key, bound to the token it succeeds,
   * kept until the window is over (and SWEEP_MARGIN_MS, for the sweep): from the rotation's time (a
   * slow statement records its commit: rotationSeenAt). Nothing when there is no window.
   */
  private sealed(
    pair: PairWithIdToken,
    rotates: number,
    at: number,
  ): Pick<store.NewToken, 'sealedPair' | 'sealedUntil'> {
    const window = this.graceWindowMs;
    if (window === 0) return { sealedPair: null, sealedUntil: null };
    const raw: SealedPair = {
      access_token: pair.accessToken,
      refresh_token: pair.refreshToken!,
      ...(pair.id_token === undefined ? {} : { id_token: pair.id_token }),
    };
    return {
      sealedPair: this.ctx.sealer.seal(JSON.stringify(raw), chain.sealedPairContext(rotates)),
      sealedUntil: at + window + SWEEP_MARGIN_MS,
    };
  }

  /**
   * A rotated refresh token presented within the grace window: its successor's pair, opened from its
   * sealed copy and checked against the successor's hashes (constant time), so every presentation
   * gets the very pair the rotation answered, in whatever order they run.
   */
  async successorPair(token: RefreshToken): Promise<Replay> {
    const successor = await chain.successorOf(this.ctx.db, token.row.id);
    if (!successor || successor.revokedAt !== null) return 'gone';
    if (successor.rotatedAt !== null) return { olderGeneration: successor.rotatedAt };
    if (successor.sealedPair === null || successor.sealedUntil === null || successor.sealedUntil < Date.now())
      return 'gone';
    let raw: SealedPair;
    try {
      raw = JSON.parse(this.ctx.sealer.open(successor.sealedPair, chain.sealedPairContext(token.row.id))) as SealedPair;
    } catch (err) {
      if (!(err instanceof SealingError)) throw err;
      this.ctx.logger.warn({ err: err.message }, 'a sealed refresh pair does not open; the replay is refused');
      return 'gone';
    }
    if (
      !safeEqual(hashToken(raw.access_token), successor.accessTokenHash) ||
      !safeEqual(hashToken(raw.refresh_token), successor.refreshTokenHash)
    )
      return 'gone';
    return {
      pair: {
        accessToken: raw.access_token,
        refreshToken: raw.refresh_token,
        accessTokenExpiresAt: new Date(successor.accessExpiresAt),
        refreshTokenExpiresAt: new Date(successor.refreshExpiresAt),
        scope: splitScope(successor.accessScope ?? successor.scope),
        client: { id: token.client.id, grants: this.grantTypes },
        user: token.user,
        ...(raw.id_token === undefined ? {} : { id_token: raw.id_token }),
        dpopJkt: successor.dpopJkt,
      },
    };
  }

  /** A rotation whose statement was slow was seen committed at `at`: the grace window (and its sealed pair) runs from then. */
  async rotationSeenAt(token: RefreshToken, at: number): Promise<void> {
    await chain.recordRotationTime(this.ctx.db, token.row.id, at, at + this.graceWindowMs + SWEEP_MARGIN_MS);
  }

  /** Clears the sealed pairs past their window, at most once a window per process, behind the answer. */
  private sweepSealedPairs(): void {
    const now = Date.now();
    if (now - lastSweep < Math.max(this.graceWindowMs, 1000)) return;
    lastSweep = now;
    chain
      .clearSealedPairs(this.ctx.db, now)
      .catch((err: unknown) => this.ctx.logger.debug({ err }, 'sealed refresh pairs not cleared; the next sweep will'));
  }

  /**
   * The pair with its ID token when its scope has `openid`, signed with the algorithm its client
   * registered (read with the code or token: no query of its own): on the code exchange with the
   * request's nonce; on a refresh (OpenID Connect Core 12.2) with the same iss, sub, aud and
   * auth_time, a new iat, and no nonce. A refresh whose narrowed scope leaves out `openid` gets none.
   */
  async withIdToken<T extends OAuth2Server.Token>(pair: T): Promise<T & { id_token?: string }> {
    if (!(pair.scope ?? []).includes('openid')) return pair;
    const source = (this.code ?? this.refresh ?? this.direct)!;
    const id_token = await signIdToken(this.ctx, {
      userId: source.userId,
      clientId: source.clientId,
      alg: source.idTokenAlg,
      accessToken: pair.accessToken,
      authTime: source.authTime,
      nonce: this.code?.nonce,
    });
    return { ...pair, id_token };
  }

  private pairRow(token: OAuth2Server.Token): store.NewToken {
    const source = (this.code ?? this.refresh ?? this.direct)!;
    const grantScope = joinScopes(splitScope(source.scope));
    const scope = joinScopes(token.scope ?? []);
    return {
      ...this.holder(),
      codeId: this.code ? this.code.id : (this.refresh?.codeId ?? null),
      accessTokenHash: hashToken(token.accessToken),
      refreshTokenHash: hashToken(token.refreshToken!),
      scope: grantScope,
      accessScope: scope === grantScope ? null : scope,
      accessExpiresAt: token.accessTokenExpiresAt!.getTime(),
      refreshExpiresAt: token.refreshTokenExpiresAt!.getTime(),
      createdAt: Date.now(),
    };
  }

  /**
   * Whom a new pair is stored under: the authorization of the code it descends from (which names
   * the user and client), or, for a grant that does not descend from a code (grantedDirectly, or a
   * refresh of such a grant's token), no authorization and the user and client on the token itself.
   */
  private holder(): Pick<store.NewToken, 'authorizationId' | 'userId' | 'applicationId'> {
    const held = this.direct ?? (this.refresh?.authorizationId === null ? this.refresh : null);
    if (held) return { authorizationId: null, userId: held.userId, applicationId: held.applicationId };
    return { authorizationId: (this.code ?? this.refresh)!.authorizationId };
  }

  /**
   * The keys meant for the client, never the whole token: expires_in is the configured lifetime
   * (RFC 6749 5.1), not the library's floor of the time left (allowExtendedTokenAttributes), and a
   * bound access token's token_type DPoP (RFC 9449 5), which replaces the library's Bearer.
   */
  answer(token: PairWithIdToken, client: OAuth2Server.Client, user: OAuth2Server.User): OAuth2Server.Token {
    return {
      ...(token.id_token === undefined ? {} : { id_token: token.id_token }),
      ...(token.dpopJkt ? { token_type: 'DPoP' } : {}),
      accessToken: token.accessToken,
      accessTokenExpiresAt: token.accessTokenExpiresAt,
      refreshToken: token.refreshToken,
      refreshTokenExpiresAt: token.refreshTokenExpiresAt,
      scope: splitScope(joinScopes(token.scope ?? [])),
      client,
      user,
      expires_in: this.ctx.config.ACCESS_TOKEN_TTL_SECONDS,
    };
  }
}
