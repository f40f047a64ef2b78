package codec

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"

	"github.com/agentchat/agentchat/keyring"
)

// TokenEnv names the environment variable with the codec server's bearer token.
const TokenEnv = "AGENTCHAT_CODEC_TOKEN"

// MaxRequestBytes bounds one /encode or /decode request body (Temporal's gRPC
// message limit, 4 MiB).
const MaxRequestBytes = 4 << 20

// HandlerOptions configure NewHandler.
type HandlerOptions struct {
	// Token is the bearer token every /encode and /decode request must carry
	// (Authorization: Bearer <token>). Token or Verify is required.
	Token string
	// Verify, when set, accepts other bearer tokens it returns no error for: an OIDC
	// JWT checked against an issuer (starter codec-server --oidc-issuer).
	Verify func(ctx context.Context, token string) error
	// Origins are the browser origins (the Temporal UI's, e.g.
	// "http://localhost:8080") allowed by CORS; "*" allows any. None: no CORS headers.
	Origins []string
}

// NewHandler serves Temporal's remote codec protocol for ring: POST /encode and
// /decode with a JSON body {"payloads": [...]} (protobuf JSON of Payloads), answered
// in kind, as converter.NewPayloadCodecHTTPHandler does; the X-Namespace header is
// accepted (one ring serves every namespace). A request without the bearer token, or
// with another, gets 401; the comparison is constant-time. OPTIONS preflights from
// an allowed origin get 204 without a token, as browsers send none there.
func NewHandler(ring *keyring.Ring, opts HandlerOptions) (http.Handler, error) {
	if ring == nil {
		return nil, errors.New("codec: server: no key ring (set AGENTCHAT_KEYS or --keys)")
	}
	if opts.Token == "" && opts.Verify == nil {
		return nil, errors.New("codec: server: no bearer token (set " + TokenEnv + ", or an OIDC issuer)")
	}
	inner := converter.NewPayloadCodecHTTPHandler(Codec{Ring: ring})
	want := []byte("Bearer " + opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && allowed(opts.Origins, origin) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if !authorized(r, want, opts) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentchat codec"`)
			http.Error(w, "codec: unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
		inner.ServeHTTP(w, r)
	}), nil
}

// authorized reports whether r carries the static token (compared in constant time)
// or a token opts.Verify accepts.
func authorized(r *http.Request, want []byte, opts HandlerOptions) bool {
	got := r.Header.Get("Authorization")
	if opts.Token != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1 {
		return true
	}
	token, ok := strings.CutPrefix(got, "Bearer ")
	return ok && token != "" && opts.Verify != nil && opts.Verify(r.Context(), token) == nil
}

func allowed(origins []string, origin string) bool {
	return slices.Contains(origins, "*") || slices.ContainsFunc(origins, func(o string) bool {
		return strings.EqualFold(strings.TrimRight(o, "/"), origin)
	})
}
