package codec

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentchat/agentchat/keyring"
)

// TokenEnv names the environment variable with the codec server's bearer token.
const TokenEnv = "AGENTCHAT_CODEC_TOKEN"

// MaxRequestBytes bounds one /encode or /decode request body, in bytes (4 MiB,
// Temporal's gRPC message limit; one payload is at most 2 MiB by the server's blob
// limit, so its base64 JSON fits). A larger body gets 413.
const MaxRequestBytes = 4 << 20

// allowMethods is the Allow header of /encode and /decode.
const allowMethods = "POST, OPTIONS"

// HandlerOptions configure NewHandler.
type HandlerOptions struct {
	// Token is the bearer token every /encode and /decode request must carry
	// (Authorization: Bearer <token>), white space around it trimmed. Token or Verify
	// is required.
	Token string
	// Verify, when set, accepts other bearer tokens it returns no error for: an OIDC
	// JWT checked against an issuer (starter codec-server --oidc-issuer).
	Verify func(ctx context.Context, token string) error
	// Log, when set, gets a line for every refused request with the reason (no
	// header, another scheme, the static token not matched, Verify's error); never
	// the token.
	Log *slog.Logger
	// Origins are the browser origins (the Temporal UI's, e.g.
	// "http://localhost:8080") allowed by CORS; "*" allows any. None: no CORS headers.
	Origins []string
}

// NewHandler serves Temporal's remote codec protocol for ring (temporalio/samples-go
// codec-server/protocol.md): POST /encode and /decode, also under any prefix such as
// /{namespace}/, with a body {"payloads": [...]} in protobuf JSON, answered in kind
// (a payload the codec did not encode comes back from /decode as it went in). The
// X-Namespace header is accepted (one ring serves every namespace).
//
// Statuses: 404 for another path; 405 with Allow for another method; 401 with
// WWW-Authenticate without the bearer token or with another (the scheme is
// case-insensitive, the token compared in constant time); 413 for a body over
// MaxRequestBytes; 400 for a body that is not Payloads JSON or a payload that does not
// decode (the message names its index and key id). OPTIONS preflights get 204
// without a token, as browsers send none there; CORS headers go to allowed origins.
func NewHandler(ring *keyring.Ring, opts HandlerOptions) (http.Handler, error) {
	if ring == nil {
		return nil, errors.New("codec: server: no key ring (set AGENTCHAT_KEYS or --keys)")
	}
	opts.Token = strings.TrimSpace(opts.Token) // as read from a file: a trailing newline
	if opts.Token == "" && opts.Verify == nil {
		return nil, errors.New("codec: server: no bearer token (set " + TokenEnv + ", or an OIDC issuer)")
	}
	c := Codec{Ring: ring}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cors(w, r, opts.Origins)
		code, ok := operation(c, r.URL.Path)
		if !ok {
			http.Error(w, "codec: not found: the codec server serves POST /encode and /decode (also under a /{namespace}/ prefix)", http.StatusNotFound)
			return
		}
		switch r.Method {
		case http.MethodOptions:
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodPost:
		default:
			w.Header().Set("Allow", allowMethods)
			http.Error(w, "codec: method "+r.Method+" not allowed: use POST", http.StatusMethodNotAllowed)
			return
		}
		if reason := refused(r, opts); reason != "" {
			if opts.Log != nil {
				opts.Log.Warn("codec server: request refused (401)", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", reason)
			}
			challenge := `Bearer realm="agentchat codec"`
			if reason != noHeader {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "codec: unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		status, body := serveCodec(http.MaxBytesReader(w, r.Body, MaxRequestBytes), code)
		if status != http.StatusOK {
			http.Error(w, string(body), status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}), nil
}

// operation returns Encode or Decode of c for a path ending in /encode or /decode.
func operation(c Codec, path string) (func([]*commonpb.Payload) ([]*commonpb.Payload, error), bool) {
	switch {
	case strings.HasSuffix(path, "/encode"):
		return c.Encode, true
	case strings.HasSuffix(path, "/decode"):
		return c.Decode, true
	}
	return nil, false
}

// serveCodec reads Payloads JSON from body, applies code and returns the status and
// the response body: the resulting Payloads JSON, or an error text.
func serveCodec(body io.Reader, code func([]*commonpb.Payload) ([]*commonpb.Payload, error)) (int, []byte) {
	b, err := io.ReadAll(body)
	if err != nil {
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			return http.StatusRequestEntityTooLarge, fmt.Appendf(nil, "codec: request body over %d bytes (MaxRequestBytes)", tooLarge.Limit)
		}
		return http.StatusBadRequest, fmt.Appendf(nil, "codec: reading the request: %v", err)
	}
	var in commonpb.Payloads
	if err := protojson.Unmarshal(b, &in); err != nil {
		return http.StatusBadRequest, fmt.Appendf(nil, `codec: the body is not {"payloads": [...]} in protobuf JSON: %v`, err)
	}
	out, err := code(in.Payloads)
	if err != nil {
		return http.StatusBadRequest, []byte(err.Error())
	}
	if len(out) == 0 {
		return http.StatusOK, []byte(`{"payloads":[]}`) // protojson leaves an empty list out
	}
	b, err = protojson.Marshal(&commonpb.Payloads{Payloads: out})
	if err != nil {
		return http.StatusInternalServerError, fmt.Appendf(nil, "codec: encoding the response: %v", err)
	}
	return http.StatusOK, b
}

// cors sets the CORS headers for an allowed Origin.
func cors(w http.ResponseWriter, r *http.Request, origins []string) {
	if len(origins) == 0 {
		return
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" || !allowed(origins, origin) {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
	h.Set("Access-Control-Allow-Methods", allowMethods)
	h.Set("Access-Control-Max-Age", "600")
}

// noHeader is refused's reason for a request without Authorization.
const noHeader = "no Authorization header"

// refused returns why r is not authorized, or "" when it carries the static token
// (compared in constant time) or a token opts.Verify accepts. The scheme "Bearer" is
// matched without case (RFC 9110, 11.1).
func refused(r *http.Request, opts HandlerOptions) string {
	got := strings.TrimSpace(r.Header.Get("Authorization"))
	if got == "" {
		return noHeader
	}
	scheme, token, _ := strings.Cut(got, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "not a Bearer token"
	}
	if opts.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(opts.Token)) == 1 {
		return ""
	}
	if opts.Verify == nil {
		return "not the token of " + TokenEnv
	}
	if err := opts.Verify(r.Context(), token); err != nil {
		return err.Error()
	}
	return ""
}

func allowed(origins []string, origin string) bool {
	return slices.Contains(origins, "*") || slices.ContainsFunc(origins, func(o string) bool {
		return strings.EqualFold(strings.TrimRight(o, "/"), origin)
	})
}

// Timeouts of the codec server's connections (NewServer): a request's headers must
// arrive within ReadHeaderTimeout and its whole body within ReadTimeout, its answer
// be written within WriteTimeout; an idle keep-alive connection is closed after
// IdleTimeout. A 4 MiB body takes well under a minute on any link the UI is used on.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = time.Minute
	WriteTimeout      = time.Minute
	IdleTimeout       = 2 * time.Minute
)

// NewServer returns an http.Server for h with the codec server's timeouts, logging
// its own errors (a broken connection, a TLS handshake) to log at level warn; log nil
// uses slog's default.
func NewServer(h http.Handler, log *slog.Logger) *http.Server {
	if log == nil {
		log = slog.Default()
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: IdleTimeout, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}
