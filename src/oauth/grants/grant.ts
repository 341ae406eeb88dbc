import type OAuth2Server from '@node-oauth/oauth2-server';
import type { components } from '../../../generated/api.d.ts';
import type { Knex } from 'knex';
import type { CodeRow, RefreshTokenRow } from '../store.ts';
import type { TokenForm } from './form.ts';

/** RFC 8414 2's metadata (and, through it, OpenID Connect Discovery's). */
export type Metadata = components['schemas']['AuthorizationServerMetadata'];

/** The stored credential a token request presents (its code, its refresh token), as its grant finds it. */
export interface PresentedCredential {
  code?: CodeRow | null;
  refreshToken?: RefreshTokenRow | null;
}

/**
 * One grant type of the token endpoint (RFC 6749 4, or an extension's), as registry.ts lists it:
 * its name, the class @node-oauth/oauth2-server's TokenHandler runs for it, what it adds to the
 * metadata documents, and its metrics label. Adding a grant is a module exporting one of these,
 * its line in registry.ts, and its value in openapi.yaml's TokenRequest `grant_type`.
 */
export interface Grant {
  /** The `grant_type` value; a value of openapi.yaml's TokenRequest enum (the typing checks it). */
  readonly type: TokenForm['grant_type'];
  /** The grant's class, as the library's `extendedGrantTypes` takes it (a ModelGrant: grants/modelGrant.ts). */
  readonly handler: typeof OAuth2Server.AbstractGrantType;
  /**
   * What the grant adds to both metadata documents beside its name in `grant_types_supported`: an
   * endpoint it brings (RFC 8628's `device_authorization_endpoint`, say), from the issuer's base URL.
   */
  readonly metadata?: (base: string) => Partial<Metadata>;
  /**
   * Whether a public client (token_endpoint_auth_method `none`, client_id alone) may use it, and a
   * client registering itself (RFC 7591) may list it in its grant_types.
   */
  readonly publicClients?: boolean;
  /** Its `grant_type` label on `oauth_token_grants_total`. */
  readonly metricsLabel: string;
  /**
   * How it finds the stored credential its request presents, read with the client's secrets before
   * the client is authenticated (TokenModel#getClient). A grant that presents none (its class
   * establishes the grant: TokenModel#grantedDirectly) has none.
   */
  readonly presented?: (db: Knex, form: TokenForm) => Promise<PresentedCredential>;
}
