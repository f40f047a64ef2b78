package cli_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/internal/syncbuf"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/internal/cli"
)

// issuer is a minimal OIDC issuer: discovery document, JWKS, and tokens it signs.
type issuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	iss := &issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss.srv.URL, "jwks_uri": iss.srv.URL + "/jwks",
			"authorization_endpoint": iss.srv.URL + "/auth", "token_endpoint": iss.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "kid1", Algorithm: "RS256", Use: "sig"}}})
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	return iss
}

func (i *issuer) token(t *testing.T, key *rsa.PrivateKey, aud string, exp time.Time) string {
	return i.tokenFrom(t, key, i.srv.URL, aud, exp)
}

func (i *issuer) tokenFrom(t *testing.T, key *rsa.PrivateKey, iss, aud string, exp time.Time) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: "kid1"}}, nil)
	require.NoError(t, err)
	claims, err := json.Marshal(map[string]any{"iss": iss, "aud": aud, "sub": "alice", "exp": exp.Unix(), "iat": time.Now().Unix()})
	require.NoError(t, err)
	obj, err := signer.Sign(claims)
	require.NoError(t, err)
	tok, err := obj.CompactSerialize()
	require.NoError(t, err)
	return tok
}

// unsigned returns a JWT with alg "none" and no signature.
func unsigned(t *testing.T, iss, aud string, exp time.Time) string {
	claims, err := json.Marshal(map[string]any{"iss": iss, "aud": aud, "sub": "alice", "exp": exp.Unix(), "iat": time.Now().Unix()})
	require.NoError(t, err)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT","kid":"kid1"}`)) + "." + enc(claims) + "."
}

// The codec server takes an OIDC JWT of the configured issuer and audience; an
// expired one, one for another audience or issuer, one signed by another key and an
// unsigned one (alg none) get 401.
func TestCodecServerAcceptsOIDCTokens(t *testing.T) {
	out, _, code := run(t, "keys", "--id", "k1")
	require.Equal(t, 0, code)
	path := filepath.Join(t.TempDir(), "keys.json")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
	t.Setenv(codec.TokenEnv, "")
	iss := newIssuer(t)

	_, errOut, code := run(t, "--keys", path, "codec-server", "--oidc-issuer", iss.srv.URL)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--oidc-audience")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var sout, serr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(ctx, []string{"--keys", path, "codec-server", "--listen", addr,
			"--oidc-issuer", iss.srv.URL, "--oidc-audience", "temporal-ui"}, cli.Streams{In: strings.NewReader(""), Out: &sout, Err: &serr})
	}()
	require.Eventually(t, func() bool { return strings.Contains(sout.String(), "codec server at") }, 10*time.Second, 10*time.Millisecond, serr.String())

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	later := time.Now().Add(time.Hour)
	for name, c := range map[string]struct {
		token string
		want  int
	}{
		"valid":          {iss.token(t, iss.key, "temporal-ui", later), http.StatusOK},
		"expired":        {iss.token(t, iss.key, "temporal-ui", time.Now().Add(-time.Hour)), http.StatusUnauthorized},
		"other audience": {iss.token(t, iss.key, "someone-else", later), http.StatusUnauthorized},
		"other key":      {iss.token(t, other, "temporal-ui", later), http.StatusUnauthorized},
		"not a JWT":      {"garbage", http.StatusUnauthorized},
		"other issuer":   {iss.tokenFrom(t, iss.key, "https://login.example.com", "temporal-ui", later), http.StatusUnauthorized},
		"alg none":       {unsigned(t, iss.srv.URL, "temporal-ui", later), http.StatusUnauthorized},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/decode", strings.NewReader(`{"payloads":[]}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, c.want, resp.StatusCode, name)
	}
	cancel()
	<-done
}
