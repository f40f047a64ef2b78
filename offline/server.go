package offline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentchat/agentchat/wire"
)

// AgentHeader is the HTTP request header that names the calling agent (its agent id).
// agentchat's model activity sets it on every request; requests without it are answered
// as agent DefaultAgent.
const AgentHeader = wire.AgentHeader

// DefaultAgent is the agent id of requests that carry no AgentHeader.
const DefaultAgent = "assistant"

// ModelID is the id of the one model GET /v1/models lists. Chat completions accept any
// model name and echo it; an empty one is answered as ModelID.
const ModelID = "offline"

// Paths the server answers, below the base URL's host.
const (
	chatCompletionsPath = "/v1/chat/completions"
	modelsPath          = "/v1/models"
)

const (
	// readHeaderTimeout bounds how long Start's listener waits for request headers.
	readHeaderTimeout = 10 * time.Second
	// closeTimeout bounds how long Close waits for connections to go idle before cutting
	// them off. In-flight requests are cancelled first, so they end well within it.
	closeTimeout = 500 * time.Millisecond
)

// Options configure a Server. The zero value is a server that gives every agent the
// default reply at once and logs nothing.
type Options struct {
	// Scripts holds scripted replies by agent id. An agent's own model call (one with
	// AuthorHeader, as agentchat's model activity sends it; Chat Completions and
	// Responses) gets the answer at its place in the conversation it carries: with k of
	// the agent's replies in it, the k-th answer of the script (0-based, counting the
	// entries without a Status), so the same conversation gets the same answer in any
	// process (a history cut to the agent's context budget carries fewer replies: give
	// scripted agents of long chats a contextTokens that holds them); the errors (entries with a Status) listed before that answer are answered
	// first, once each per chat. Other requests (selectors, judges, summaries, Assistants
	// runs, clients other than agentchat) take the entries in order, one per request of
	// the agent in one chat (by wire.ChatHeader), errors included. Past the end, the
	// default reply. New copies the map and slices.
	Scripts map[string][]Reply
	// Latency is waited before every model answer, on top of any Reply.Delay;
	// zero means none. Requests rejected as malformed (400) do not wait.
	Latency time.Duration
	// ChunkDelay is the pause between Server-Sent Events when streaming; zero means none.
	ChunkDelay time.Duration
	// ChunkDelays are the pauses of single agents, by agent id, in place of ChunkDelay
	// (a Reply's own ChunkDelay wins over both).
	ChunkDelays map[string]time.Duration
	// Logger receives one Debug record per request and an Info record per refused
	// request (never its headers, so never the Authorization key); nil discards.
	Logger *slog.Logger
}

// Server is the offline OpenAI-compatible model server. It is an http.Handler; Start also
// serves it on a loopback port. Its methods are safe for concurrent use.
type Server struct {
	opts   Options
	log    *slog.Logger
	ledger *ledger
	svc    *services // the Responses and Assistants state (services.go)

	reported reported // the usage reported, by agent (ReportedUsage)

	refusedMu sync.Mutex
	refused   []Violation // every request refused for breaking a request rule, in order

	// Set by Start only.
	url       string
	http      *http.Server
	cancel    context.CancelFunc // cancels the base context of every served request
	closeOnce sync.Once
	closeErr  error
}

// New returns a Server for opts that is not listening anywhere: use it as an
// http.Handler (for example with httptest.NewServer) or call Start instead.
func New(opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: logger, ledger: newLedger(opts.Scripts), svc: newServices()}
	s.svc.reported = &s.reported
	return s
}

// Start is New plus serving on 127.0.0.1 at a free port in a goroutine, until Close.
// It fails only when it cannot listen.
func Start(opts Options) (*Server, error) {
	return StartOn("127.0.0.1:0", opts)
}

// StartOn is Start on addr, a host:port as net.Listen takes it ("127.0.0.1:8000";
// port 0 picks a free one): `go run ./starter model --listen HOST:PORT` serves the
// offline model on its own with it. It fails only when it cannot listen on addr.
func StartOn(addr string, opts Options) (*Server, error) {
	s := New(opts)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("offline: listen on %s: %w", addr, err)
	}
	base, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.url = "http://" + ln.Addr().String() + "/v1"
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("offline: serve", "error", err)
		}
	}()
	s.log.Info("offline: model server listening", "url", s.url)
	return s, nil
}

// URL is the base URL for go-openai's ClientConfig.BaseURL, "http://127.0.0.1:<port>/v1";
// "" when the server was made by New and not started.
func (s *Server) URL() string {
	return s.url
}

// Close stops a started server: it stops listening, cancels in-flight requests (a request
// still waiting out its delay gets 503, a stream stops), waits up to half a second for the
// connections to go idle, then closes every connection. It returns an error only if
// closing failed; nil for a server that was never started. Calling it again returns the
// same result.
func (s *Server) Close() error {
	if s.http == nil {
		return nil
	}
	s.closeOnce.Do(func() {
		s.cancel()
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		err := s.http.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			// Some connection is still busy, or was dialled and never used (net/http
			// waits 5s for those): cut them off.
			err = s.http.Close()
		}
		if err != nil {
			s.closeErr = fmt.Errorf("offline: close: %w", err)
		}
	})
	return s.closeErr
}

// ServeHTTP answers the OpenAI endpoints listed in the package comment, and the
// Responses and Assistants endpoints of services.go. The Authorization
// header is accepted whatever it holds, and never checked or logged.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch path {
	case chatCompletionsPath:
		if allowMethod(w, r, http.MethodPost) {
			s.chatCompletions(w, r)
		}
	case modelsPath, modelsPath + "/" + ModelID:
		if allowMethod(w, r, http.MethodGet) {
			s.models(w, path)
		}
	default:
		if s.serveService(w, r, path) {
			return
		}
		s.log.Debug("offline: unknown path", "method", r.Method, "path", r.URL.Path)
		writeError(w, http.StatusNotFound, fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path), 0)
	}
}

// allowMethod reports whether r uses method; if not, it answers 405 with an Allow header.
func allowMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	return allowMethods(w, r, method)
}

// allowMethods is allowMethod for a path that answers several methods.
func allowMethods(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	if slices.Contains(methods, r.Method) {
		return true
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeError(w, http.StatusMethodNotAllowed,
		fmt.Sprintf("Method %s not allowed for %s; use %s.", r.Method, r.URL.Path, strings.Join(methods, " or ")), 0)
	return false
}

// chatOf is the chat id r names in wire.ChatHeader, or "".
func chatOf(r *http.Request) string { return strings.TrimSpace(r.Header.Get(wire.ChatHeader)) }

// agentOf is the agent id r names in AgentHeader, or DefaultAgent.
func agentOf(r *http.Request) string {
	if agent := strings.TrimSpace(r.Header.Get(AgentHeader)); agent != "" {
		return agent
	}
	return DefaultAgent
}

// Violations is every request the server refused for breaking one of OpenAI's request
// rules (see Validate and Violation), oldest first: the rules of Chat Completions and
// Responses, a body that is not the JSON the endpoint takes, and an unknown
// previous_response_id. Scripted errors are not violations. A system test asserts it
// is empty: OpenAI would have refused each of these requests. It is a copy, safe for
// concurrent use.
func (s *Server) Violations() []Violation {
	s.refusedMu.Lock()
	defer s.refusedMu.Unlock()
	return slices.Clone(s.refused)
}

// refuse answers v for r and records it as a violation.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, v *Violation) {
	v.Path, v.Agent, v.Chat = strings.TrimSuffix(r.URL.Path, "/"), agentOf(r), chatOf(r)
	s.refusedMu.Lock()
	s.refused = append(s.refused, *v)
	s.refusedMu.Unlock()
	s.log.Info("offline: refused a request", "path", v.Path, "agent", v.Agent, "status", v.Status,
		"param", v.Param, "message", v.Message)
	writeJSON(w, v.Status, v.body())
}

// sleep waits d, or until ctx ends; it reports whether the whole d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
