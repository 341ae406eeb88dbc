// A relying party on go-oidc (github.com/coreos/go-oidc/v3) and golang.org/x/oauth2, written the way
// go-oidc's README signs a user in: oidc.NewProvider (discovery; it checks the document's issuer),
// an oauth2.Config on provider.Endpoint(), the code flow with state, nonce and PKCE, and the ID token
// checked by provider.Verifier(&oidc.Config{ClientID}): its defaults take the signing algorithms
// from the discovery document's id_token_signing_alg_values_supported and the keys from jwks_uri.
// A client registered with an id_token_signed_response_alg says so (SupportedSigningAlgs).
// Then at_hash and userinfo.
//
// Protocol (test/oidc/relyingParties.test.ts): environment OIDC_ISSUER, OIDC_CLIENT_ID,
// OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI and OIDC_ID_TOKEN_ALG (the client's registered
// id_token_signed_response_alg; empty: none registered). Prints `AUTHORIZE <url>`, reads the
// callback URL from stdin, prints `RESULT {...}`. Any failure exits non-zero with the reason.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func random() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		fail("random: %v", err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func header(raw string) map[string]any {
	part, err := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[0])
	if err != nil {
		fail("ID token header: %v", err)
	}
	var h map[string]any
	if err := json.Unmarshal(part, &h); err != nil {
		fail("ID token header: %v", err)
	}
	return h
}

func main() {
	ctx := context.Background()
	issuer := os.Getenv("OIDC_ISSUER")
	clientID := os.Getenv("OIDC_CLIENT_ID")
	registeredAlg := os.Getenv("OIDC_ID_TOKEN_ALG")

	provider, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		fail("discovery: %v", err)
	}
	config := oauth2.Config{
		ClientID:     clientID,
		ClientSecret: os.Getenv("OIDC_CLIENT_SECRET"),
		Endpoint:     provider.Endpoint(),
		RedirectURL:  os.Getenv("OIDC_REDIRECT_URI"),
		Scopes:       []string{oidc.ScopeOpenID, "user_info"},
	}
	verifierConfig := &oidc.Config{ClientID: clientID}
	if registeredAlg != "" {
		verifierConfig.SupportedSigningAlgs = []string{registeredAlg}
	}
	verifier := provider.Verifier(verifierConfig)

	state, nonce, pkce := random(), random(), oauth2.GenerateVerifier()
	fmt.Println("AUTHORIZE " + config.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(pkce)))

	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fail("no callback URL on stdin: %v", err)
	}
	callback, err := url.Parse(strings.TrimSpace(line))
	if err != nil {
		fail("callback URL: %v", err)
	}
	query := callback.Query()
	if e := query.Get("error"); e != "" {
		fail("authorization error: %s", e)
	}
	if query.Get("state") != state {
		fail("state mismatch")
	}
	if query.Get("iss") != issuer {
		fail("iss of the authorization response (RFC 9207): %q", query.Get("iss"))
	}

	token, err := config.Exchange(ctx, query.Get("code"), oauth2.VerifierOption(pkce))
	if err != nil {
		fail("code exchange: %v", err)
	}
	raw, ok := token.Extra("id_token").(string)
	if !ok {
		fail("no id_token in the token response")
	}
	idToken, err := verifier.Verify(ctx, raw)
	if err != nil {
		fail("ID token: %v", err)
	}
	if idToken.Nonce != nonce {
		fail("nonce mismatch")
	}
	if err := idToken.VerifyAccessToken(token.AccessToken); err != nil {
		fail("at_hash: %v", err)
	}
	userInfo, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(token))
	if err != nil {
		fail("userinfo: %v", err)
	}
	if userInfo.Subject != idToken.Subject {
		fail("userinfo sub %q is not the ID token's %q", userInfo.Subject, idToken.Subject)
	}

	h := header(raw)
	result, _ := json.Marshal(map[string]any{
		"library":      "github.com/coreos/go-oidc/v3",
		"expected_alg": verifierConfig.SupportedSigningAlgs,
		"alg":          h["alg"],
		"kid":          h["kid"],
		"sub":          idToken.Subject,
		"aud":          idToken.Audience[0],
		"iss":          idToken.Issuer,
		"userinfo_sub": userInfo.Subject,
	})
	fmt.Println("RESULT " + string(result))
}
