package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/coreos/go-oidc/v3/oidc"
)

// oidcVerifier returns a check of OIDC JWTs signed by issuer for audience (signature
// from the issuer's JWKS, issuer, audience, expiry; coreos/go-oidc), or nil with no
// issuer.
func oidcVerifier(ctx context.Context, issuer, audience string) (func(context.Context, string) error, error) {
	if issuer == "" {
		if audience != "" {
			return nil, errors.New("codec server: --oidc-audience needs --oidc-issuer")
		}
		return nil, nil
	}
	if audience == "" {
		return nil, errors.New("codec server: --oidc-issuer needs --oidc-audience (the client id tokens must name)")
	}
	provider, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		return nil, fmt.Errorf("codec server: OIDC issuer %s: %w", issuer, err)
	}
	v := provider.Verifier(&oidc.Config{ClientID: audience})
	return func(ctx context.Context, token string) error {
		_, err := v.Verify(ctx, token)
		return err
	}, nil
}
