package codec_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentchat/agentchat/internal/syncbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/keyring"
)

func newRing(t *testing.T, current string, ids ...string) *keyring.Ring {
	t.Helper()
	f := keyring.File{Current: current, Keys: map[string]string{}}
	for i, id := range ids {
		f.Keys[id] = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(i + 1)}, 32))
	}
	r, err := keyring.New(f)
	require.NoError(t, err)
	return r
}

func TestDataConverterSealsAndOpens(t *testing.T) {
	dc := codec.DataConverter(newRing(t, "k1", "k1"))
	p, err := dc.ToPayload(map[string]string{"text": "My name is Alice"})
	require.NoError(t, err)
	assert.Equal(t, codec.EncodingEncrypted, string(p.Metadata[codec.MetadataEncoding]))
	assert.Equal(t, "k1", string(p.Metadata[codec.MetadataKeyID]))
	assert.NotContains(t, string(p.Data), "Alice")
	var got map[string]string
	require.NoError(t, dc.FromPayload(p, &got))
	assert.Equal(t, "My name is Alice", got["text"])

	plain, err := converter.GetDefaultDataConverter().ToPayload("not encrypted")
	require.NoError(t, err)
	var s string
	require.NoError(t, dc.FromPayload(plain, &s), "payloads written before encryption still read")
	assert.Equal(t, "not encrypted", s)
}

func TestRotationAndUnknownKey(t *testing.T) {
	old := codec.DataConverter(newRing(t, "k1", "k1"))
	p, err := old.ToPayload("before")
	require.NoError(t, err)
	rotated := codec.DataConverter(newRing(t, "k2", "k1", "k2"))
	var s string
	require.NoError(t, rotated.FromPayload(p, &s))
	assert.Equal(t, "before", s)
	q, err := rotated.ToPayload("after")
	require.NoError(t, err)
	assert.Equal(t, "k2", string(q.Metadata[codec.MetadataKeyID]))

	onlyK1 := codec.DataConverter(newRing(t, "k1", "k1"))
	err = onlyK1.FromPayload(q, &s)
	var unknown *keyring.UnknownKeyError
	require.ErrorAs(t, err, &unknown)
	assert.Contains(t, err.Error(), `"k2"`)

	q.Data[len(q.Data)-1] ^= 1
	assert.ErrorIs(t, rotated.FromPayload(q, &s), keyring.ErrNotAuthentic)
}

func TestFailureConverterHidesTheMessage(t *testing.T) {
	dc := codec.DataConverter(newRing(t, "k1", "k1"))
	fc := codec.FailureConverter(dc)
	f := fc.ErrorToFailure(temporal.NewApplicationError("model said: My name is Alice", "TurnFailed"))
	assert.NotContains(t, f.GetMessage(), "Alice")
	assert.NotContains(t, f.String(), "Alice")
	back := fc.FailureToError(f)
	var app *temporal.ApplicationError
	require.True(t, errors.As(back, &app))
	assert.Contains(t, app.Error(), "My name is Alice")
	assert.Equal(t, "TurnFailed", app.Type())
}

func serve(t *testing.T, ring *keyring.Ring) *httptest.Server {
	t.Helper()
	h, err := codec.NewHandler(ring, codec.HandlerOptions{Token: "tok", Origins: []string{"http://localhost:8080"}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, auth string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestHandlerEncodeDecodeWithToken(t *testing.T) {
	ring := newRing(t, "k1", "k1")
	srv := serve(t, ring)
	p, err := converter.GetDefaultDataConverter().ToPayload("My name is Alice")
	require.NoError(t, err)
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	require.NoError(t, err)

	resp, enc := post(t, srv.URL+"/encode", "Bearer tok", body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(enc))
	assert.NotContains(t, string(enc), base64.StdEncoding.EncodeToString([]byte(`"My name is Alice"`)))
	var sealed commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(enc, &sealed))
	assert.Equal(t, codec.EncodingEncrypted, string(sealed.Payloads[0].Metadata[codec.MetadataEncoding]))

	resp, dec := post(t, srv.URL+"/decode", "Bearer tok", enc)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(dec))
	var opened commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(dec, &opened))
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(opened.Payloads[0], &s))
	assert.Equal(t, "My name is Alice", s)
}

func TestHandlerRefusesWithoutTheToken(t *testing.T) {
	srv := serve(t, newRing(t, "k1", "k1"))
	for _, auth := range []string{"", "Bearer wrong", "tok", "Bearer tok2", "Basic dG9r"} {
		resp, body := post(t, srv.URL+"/decode", auth, []byte(`{"payloads":[]}`))
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "auth %q", auth)
		assert.Contains(t, string(body), "unauthorized")
	}
}

func TestHandlerCORSPreflightAndErrors(t *testing.T) {
	srv := serve(t, newRing(t, "k1", "k1"))
	req, err := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	require.NoError(t, err)
	req.Header.Set("Origin", "http://localhost:8080")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-namespace")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, "http://localhost:8080", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "x-namespace")
	assert.Contains(t, strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "authorization")

	req.Header.Set("Origin", "http://evil.example")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "an origin not configured")

	other := codec.DataConverter(newRing(t, "k7", "k7"))
	p, err := other.ToPayload("x")
	require.NoError(t, err)
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	r2, msg := post(t, srv.URL+"/decode", "Bearer tok", body)
	assert.Equal(t, http.StatusBadRequest, r2.StatusCode)
	assert.Contains(t, string(msg), `"k7"`, "the unknown key id is named")

	r3, _ := post(t, srv.URL+"/decode", "Bearer tok", []byte(`{not json`))
	assert.Equal(t, http.StatusBadRequest, r3.StatusCode)
}

func TestNewHandlerNeedsRingAndToken(t *testing.T) {
	_, err := codec.NewHandler(nil, codec.HandlerOptions{Token: "t"})
	assert.ErrorContains(t, err, "no key ring")
	_, err = codec.NewHandler(newRing(t, "k1", "k1"), codec.HandlerOptions{})
	assert.ErrorContains(t, err, codec.TokenEnv)
}

// The codec server reads at most MaxRequestBytes of a request: a body of exactly that
// size is encoded, one byte more gets 413 (the SDK's handler reads bodies whole and
// unbounded).
func TestHandlerBodyAtTheLimitAndJustOver(t *testing.T) {
	srv := serve(t, newRing(t, "k1", "k1"))
	data := make([]byte, codec.MaxRequestBytes/4*3-1024) // base64 grows it by a third
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{{
		Metadata: map[string][]byte{"encoding": []byte("binary/plain")}, Data: data}}})
	require.NoError(t, err)
	require.Less(t, len(body), codec.MaxRequestBytes)
	at := append(body, bytes.Repeat([]byte(" "), codec.MaxRequestBytes-len(body))...) // JSON allows trailing space
	resp, out := post(t, srv.URL+"/encode", "Bearer tok", at)
	require.Equal(t, http.StatusOK, resp.StatusCode, "at the limit: %.200s", out)
	var sealed commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(out, &sealed))
	assert.Equal(t, codec.EncodingEncrypted, string(sealed.Payloads[0].Metadata[codec.MetadataEncoding]))

	resp, out = post(t, srv.URL+"/encode", "Bearer tok", append(at, ' '))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "one byte over: refused, %.200s", out)
}

// With a ring, Apply turns gzip of requests off (payloads are ciphertext) unless the
// options already choose a compression; without one it changes nothing.
func TestApplyTurnsGzipOffForCiphertextUnlessChosen(t *testing.T) {
	r := newRing(t, "k1", "k1")
	var co client.Options
	codec.Apply(&co, r)
	assert.IsType(t, &client.GrpcCompressionNone{}, co.ConnectionOptions.GrpcCompression)
	assert.NotNil(t, co.DataConverter)

	chosen := client.Options{ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionGzip{}}}
	codec.Apply(&chosen, r)
	assert.IsType(t, &client.GrpcCompressionGzip{}, chosen.ConnectionOptions.GrpcCompression)

	var off client.Options
	codec.Apply(&off, nil)
	assert.Nil(t, off.ConnectionOptions.GrpcCompression)
	assert.Nil(t, off.DataConverter)
}

// A payload the codec did not encode comes back from /decode as it went in, in
// protobuf JSON (the protocol's rule): fields the SDK's handler renamed by Go's
// encoding/json (external_payloads, size_bytes as a number) keep their names.
func TestHandlerPassesForeignPayloadsThroughUntouched(t *testing.T) {
	srv := serve(t, newRing(t, "k1", "k1"))
	in := `{"payloads":[{"metadata":{"encoding":"YmluYXJ5L3NuYXBweQ=="},"data":"AAECAw==","externalPayloads":[{"sizeBytes":"12"}]},{}]}`
	resp, out := post(t, srv.URL+"/decode", "Bearer tok", []byte(in))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
	assert.JSONEq(t, in, string(out))

	resp, out = post(t, srv.URL+"/encode", "Bearer tok", []byte(`{"payloads":[]}`))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
	assert.JSONEq(t, `{"payloads":[]}`, string(out), "an empty list answers an empty list")
}

// Requests the protocol does not define are told what is: an unknown path is 404
// (with or without a token), another method on /encode or /decode is 405 with Allow,
// a body over MaxRequestBytes is 413 naming the limit, and a refused token gets
// WWW-Authenticate with error="invalid_token" (RFC 6750, section 3).
func TestHandlerStatusOfRequestsOutsideTheProtocol(t *testing.T) {
	srv := serve(t, newRing(t, "k1", "k1"))
	for _, auth := range []string{"", "Bearer tok"} {
		resp, _ := post(t, srv.URL+"/encodex", auth, []byte(`{"payloads":[]}`))
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "auth %q", auth)
		resp, _ = post(t, srv.URL+"/", auth, []byte(`{"payloads":[]}`))
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "auth %q", auth)
	}
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		req, err := http.NewRequest(method, srv.URL+"/decode", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, method)
		assert.Equal(t, "POST, OPTIONS", resp.Header.Get("Allow"), method)
	}
	resp, out := post(t, srv.URL+"/default/decode", "Bearer tok", []byte(`{"payloads":[]}`))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "under a /{namespace}/ prefix: %s", out)

	resp, out = post(t, srv.URL+"/encode", "Bearer tok", bytes.Repeat([]byte(" "), codec.MaxRequestBytes+1))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(out))
	assert.Contains(t, string(out), "4194304 bytes")

	resp, _ = post(t, srv.URL+"/decode", "", []byte(`{"payloads":[]}`))
	assert.Equal(t, `Bearer realm="agentchat codec"`, resp.Header.Get("WWW-Authenticate"))
	resp, _ = post(t, srv.URL+"/decode", "Bearer wrong", []byte(`{"payloads":[]}`))
	assert.Equal(t, `Bearer realm="agentchat codec", error="invalid_token"`, resp.Header.Get("WWW-Authenticate"))
}

// The auth scheme is case-insensitive (RFC 9110, section 11.1) and the token may be
// surrounded by spaces; the token itself must match exactly.
func TestHandlerBearerSchemeIgnoresCase(t *testing.T) {
	srv := serve(t, newRing(t, "k1", "k1"))
	for _, auth := range []string{"Bearer tok", "bearer tok", "BEARER tok", "Bearer  tok "} {
		resp, out := post(t, srv.URL+"/decode", auth, []byte(`{"payloads":[]}`))
		assert.Equal(t, http.StatusOK, resp.StatusCode, "auth %q: %s", auth, out)
	}
	for _, auth := range []string{"Bearer TOK", "Bearer", "Bearer ", "Bearertok", "Bearer tok tok"} {
		resp, _ := post(t, srv.URL+"/decode", auth, []byte(`{"payloads":[]}`))
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "auth %q", auth)
	}
}

// A token read from a file or an env file may end in a newline (or CR): it is trimmed
// as the header's token is, so it matches what a client sends.
func TestHandlerTrimsTheConfiguredToken(t *testing.T) {
	h, err := codec.NewHandler(newRing(t, "k1", "k1"), codec.HandlerOptions{Token: "tok\r\n"})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	resp, out := post(t, srv.URL+"/decode", "Bearer tok", []byte(`{"payloads":[]}`))
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(out))

	_, err = codec.NewHandler(newRing(t, "k1", "k1"), codec.HandlerOptions{Token: " \n"})
	assert.ErrorContains(t, err, "no bearer token", "a token of white space is none")
}

// A refused token is logged with the reason the check gave (an expired JWT, say), so
// an operator can tell why the UI gets 401; the token itself is never logged.
func TestHandlerLogsWhyATokenWasRefused(t *testing.T) {
	var buf syncbuf.Buffer
	h, err := codec.NewHandler(newRing(t, "k1", "k1"), codec.HandlerOptions{Token: "tok",
		Verify: func(context.Context, string) error { return errors.New("oidc: token is expired") },
		Log:    slog.New(slog.NewTextHandler(&buf, nil))})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	resp, _ := post(t, srv.URL+"/decode", "Bearer eyJ.secret-jwt.sig", []byte(`{"payloads":[]}`))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, buf.String(), "token is expired")
	assert.NotContains(t, buf.String(), "secret-jwt")
	resp, _ = post(t, srv.URL+"/decode", "", []byte(`{"payloads":[]}`))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, buf.String(), "no Authorization header")
}
