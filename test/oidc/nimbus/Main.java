// A relying party on Nimbus OAuth 2.0 SDK with OpenID Connect extensions (com.nimbusds:oauth2-oidc-sdk),
// written the way its guide signs a user in: provider metadata from discovery, an authentication
// request with state, nonce and PKCE, the code exchange with client_secret_basic, and the ID token
// checked by the SDK's default validator, IDTokenValidator.create(provider metadata, client
// information): it expects the client's registered id_token_signed_response_alg (RS256 when the
// registration names none, the Dynamic Client Registration default) and takes the keys from the
// provider's jwks_uri. Then at_hash and userinfo.
//
// Protocol (test/oidc/relyingParties.test.ts): environment OIDC_ISSUER, OIDC_CLIENT_ID,
// OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI and OIDC_ID_TOKEN_ALG (the client's registered
// id_token_signed_response_alg; empty: none registered). Prints `AUTHORIZE <url>`, reads the
// callback URL the browser was sent to from stdin, prints one JSON line `RESULT {...}`. Any failure
// exits non-zero with the reason on stderr.
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jwt.JWT;
import com.nimbusds.oauth2.sdk.AuthorizationCode;
import com.nimbusds.oauth2.sdk.AuthorizationCodeGrant;
import com.nimbusds.oauth2.sdk.ResponseType;
import com.nimbusds.oauth2.sdk.Scope;
import com.nimbusds.oauth2.sdk.TokenRequest;
import com.nimbusds.oauth2.sdk.TokenResponse;
import com.nimbusds.oauth2.sdk.auth.ClientSecretBasic;
import com.nimbusds.oauth2.sdk.auth.Secret;
import com.nimbusds.oauth2.sdk.id.ClientID;
import com.nimbusds.oauth2.sdk.id.Issuer;
import com.nimbusds.oauth2.sdk.id.State;
import com.nimbusds.oauth2.sdk.pkce.CodeChallengeMethod;
import com.nimbusds.oauth2.sdk.pkce.CodeVerifier;
import com.nimbusds.oauth2.sdk.token.AccessToken;
import com.nimbusds.oauth2.sdk.token.BearerAccessToken;
import com.nimbusds.openid.connect.sdk.AuthenticationErrorResponse;
import com.nimbusds.openid.connect.sdk.AuthenticationRequest;
import com.nimbusds.openid.connect.sdk.AuthenticationResponse;
import com.nimbusds.openid.connect.sdk.AuthenticationResponseParser;
import com.nimbusds.openid.connect.sdk.AuthenticationSuccessResponse;
import com.nimbusds.openid.connect.sdk.Nonce;
import com.nimbusds.openid.connect.sdk.OIDCTokenResponse;
import com.nimbusds.openid.connect.sdk.OIDCTokenResponseParser;
import com.nimbusds.openid.connect.sdk.UserInfoRequest;
import com.nimbusds.openid.connect.sdk.UserInfoResponse;
import com.nimbusds.openid.connect.sdk.claims.IDTokenClaimsSet;
import com.nimbusds.openid.connect.sdk.claims.UserInfo;
import com.nimbusds.openid.connect.sdk.op.OIDCProviderMetadata;
import com.nimbusds.openid.connect.sdk.rp.OIDCClientInformation;
import com.nimbusds.openid.connect.sdk.rp.OIDCClientMetadata;
import com.nimbusds.openid.connect.sdk.validators.AccessTokenValidator;
import com.nimbusds.openid.connect.sdk.validators.IDTokenValidator;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;

public class Main {
  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null) throw new IllegalStateException(name + " is not set");
    return value;
  }

  private static void fail(String why) {
    System.err.println(why);
    System.exit(1);
  }

  public static void main(String[] args) throws Exception {
    Issuer issuer = new Issuer(env("OIDC_ISSUER"));
    ClientID clientId = new ClientID(env("OIDC_CLIENT_ID"));
    Secret secret = new Secret(env("OIDC_CLIENT_SECRET"));
    URI callback = URI.create(env("OIDC_REDIRECT_URI"));
    String registeredAlg = env("OIDC_ID_TOKEN_ALG");

    // Discovery (the SDK checks that the document's issuer is the one asked for).
    OIDCProviderMetadata provider = OIDCProviderMetadata.resolve(issuer);

    // The client as registered: no id_token_signed_response_alg unless the registration named one;
    // applyDefaults() gives what the SDK defaults to (RS256).
    OIDCClientMetadata metadata = new OIDCClientMetadata();
    metadata.setRedirectionURI(callback);
    if (!registeredAlg.isEmpty()) metadata.setIDTokenJWSAlg(JWSAlgorithm.parse(registeredAlg));
    metadata.applyDefaults();
    OIDCClientInformation client = new OIDCClientInformation(clientId, null, metadata, secret);

    State state = new State();
    Nonce nonce = new Nonce();
    CodeVerifier verifier = new CodeVerifier();
    AuthenticationRequest request = new AuthenticationRequest.Builder(new ResponseType("code"), new Scope("openid", "user_info"), clientId, callback)
        .endpointURI(provider.getAuthorizationEndpointURI())
        .state(state)
        .nonce(nonce)
        .codeChallenge(verifier, CodeChallengeMethod.S256)
        .build();
    System.out.println("AUTHORIZE " + request.toURI());
    System.out.flush();

    String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    if (line == null) fail("no callback URL on stdin");
    AuthenticationResponse response = AuthenticationResponseParser.parse(URI.create(line.trim()));
    if (!response.indicatesSuccess()) {
      AuthenticationErrorResponse error = response.toErrorResponse();
      fail("authentication error: " + error.getErrorObject().getCode());
    }
    AuthenticationSuccessResponse success = response.toSuccessResponse();
    if (!state.equals(success.getState())) fail("state mismatch");
    if (!issuer.equals(success.getIssuer())) fail("iss of the authorization response (RFC 9207): " + success.getIssuer());

    AuthorizationCode code = success.getAuthorizationCode();
    TokenRequest tokenRequest = new TokenRequest.Builder(provider.getTokenEndpointURI(), new ClientSecretBasic(clientId, secret), new AuthorizationCodeGrant(code, callback, verifier)).build();
    TokenResponse tokenResponse = OIDCTokenResponseParser.parse(tokenRequest.toHTTPRequest().send());
    if (!tokenResponse.indicatesSuccess()) fail("token error: " + tokenResponse.toErrorResponse().getErrorObject().toJSONObject());
    OIDCTokenResponse tokens = (OIDCTokenResponse) tokenResponse.toSuccessResponse();
    JWT idToken = tokens.getOIDCTokens().getIDToken();
    AccessToken accessToken = tokens.getOIDCTokens().getAccessToken();

    // The SDK's default validator for this provider and client: signature by a key of jwks_uri,
    // the expected algorithm, iss, aud, exp, iat and nonce.
    IDTokenValidator validator = IDTokenValidator.create(provider, client);
    IDTokenClaimsSet claims = validator.validate(idToken, nonce);
    JWSAlgorithm alg = (JWSAlgorithm) idToken.getHeader().getAlgorithm();
    AccessTokenValidator.validate(accessToken, alg, claims.getAccessTokenHash());

    UserInfoResponse userInfoResponse = UserInfoResponse.parse(new UserInfoRequest(provider.getUserInfoEndpointURI(), (BearerAccessToken) accessToken).toHTTPRequest().send());
    if (!userInfoResponse.indicatesSuccess()) fail("userinfo error: " + userInfoResponse.toErrorResponse().getErrorObject().toJSONObject());
    UserInfo userInfo = userInfoResponse.toSuccessResponse().getUserInfo();
    if (!userInfo.getSubject().equals(claims.getSubject())) fail("userinfo sub " + userInfo.getSubject() + " is not the ID token's " + claims.getSubject());

    Map<String, Object> result = new java.util.LinkedHashMap<>();
    result.put("library", "com.nimbusds:oauth2-oidc-sdk");
    // What the default validator was made to expect: the client's registered algorithm, or the SDK's default.
    result.put("expected_alg", client.getOIDCMetadata().getIDTokenJWSAlg().getName());
    result.put("alg", alg.getName());
    result.put("kid", idToken.getHeader().toJSONObject().get("kid"));
    result.put("sub", claims.getSubject().getValue());
    result.put("aud", claims.getAudience().get(0).getValue());
    result.put("iss", claims.getIssuer().getValue());
    result.put("userinfo_sub", userInfo.getSubject().getValue());
    System.out.println("RESULT " + com.nimbusds.jose.util.JSONObjectUtils.toJSONString(result));
  }
}
