module openauth.test/go-oidc-relying-party

go 1.26.0

require (
	github.com/coreos/go-oidc/v3 v3.21.0
	golang.org/x/oauth2 v0.38.0
)

require github.com/go-jose/go-jose/v4 v4.1.4 // indirect
