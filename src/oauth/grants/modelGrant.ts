import OAuth2Server from '@node-oauth/oauth2-server';
import type { TokenModel } from '../model.ts';
import type { TokenForm } from './form.ts';

/**
 * What our grant types share as `extendedGrantTypes` of @node-oauth/oauth2-server: the request's
 * own model (model.ts, one per request), typed, and the token form the contract validator checked.
 */
export abstract class ModelGrant extends OAuth2Server.AbstractGrantType {
  readonly model: TokenModel;

  constructor(options: OAuth2Server.TokenOptions) {
    super(options);
    this.model = (options as { model: TokenModel }).model;
  }

  protected formOf(request: OAuth2Server.Request): TokenForm {
    return request.body as TokenForm;
  }
}
