package systest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// maxRecordedBody bounds the error body a ModelRequest keeps, in bytes.
const maxRecordedBody = 64 << 10

// ModelRequest is one HTTP request the model received and how it answered.
type ModelRequest struct {
	Agent  string // wire.AgentHeader
	Chat   string // wire.ChatHeader: the chat (workflow id) that made it
	Method string
	Path   string
	Status int
	// ErrorBody is the answer's body when Status >= 400.
	ErrorBody string
	// Problems are the rules of OpenAI's the full body breaks (chatCompletionRules).
	Problems []string
}

// Recorder serves the offline model on a loopback port and records every request. It
// is safe for concurrent use.
type Recorder struct {
	Model *offline.Server
	url   string
	srv   *http.Server

	mu   sync.Mutex
	reqs []ModelRequest
}

// startRecorder serves a new offline model with opts behind a recorder.
func startRecorder(opts offline.Options) (*Recorder, error) {
	r := &Recorder{Model: offline.New(opts)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.url = "http://" + ln.Addr().String() + "/v1"
	r.srv = &http.Server{Handler: r}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// URL is the model's base URL, for activities.Config.Models.BaseURLOverride.
func (r *Recorder) URL() string { return r.url }

// Close stops serving.
func (r *Recorder) Close() error { return r.srv.Close() }

// ServeHTTP records req, lets the model answer it, and records the answer's status.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	rec := ModelRequest{Agent: req.Header.Get(wire.AgentHeader), Chat: strings.TrimSpace(req.Header.Get(wire.ChatHeader)),
		Method: req.Method, Path: req.URL.Path}
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/chat/completions") {
		rec.Problems = chatCompletionRules(body)
	}
	sw := &statusWriter{ResponseWriter: w}
	r.Model.ServeHTTP(sw, req)
	rec.Status = sw.status
	if rec.Status == 0 {
		rec.Status = http.StatusOK
	}
	rec.ErrorBody = sw.errBody.String()
	r.mu.Lock()
	r.reqs = append(r.reqs, rec)
	r.mu.Unlock()
}

// Requests returns a copy of the requests recorded so far, in the order answered.
func (r *Recorder) Requests() []ModelRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ModelRequest(nil), r.reqs...)
}

// statusWriter remembers the status and, for errors, the start of the body. It
// unwraps for http.ResponseController, so the model's streaming flushes still work.
type statusWriter struct {
	http.ResponseWriter
	status  int
	errBody bytes.Buffer
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 && w.errBody.Len() < maxRecordedBody {
		w.errBody.Write(b[:min(len(b), maxRecordedBody-w.errBody.Len())])
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes flushes through for code that asserts http.Flusher directly.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
