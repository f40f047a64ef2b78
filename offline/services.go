package offline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// The stateful endpoints: OpenAI's Responses API (responses.go) and Assistants API
// (assistants.go). Unlike chat completions, the conversation lives in the server: a
// chain of stored responses, or a thread. The server keeps both in memory for its
// lifetime and never evicts anything: it serves tests, the demo and worker --offline,
// whose conversations are small.
//
// Both answer from the whole conversation as the model would see it (the chain, or the
// thread, plus the instructions as a system message), through the same DefaultText and
// scripts as chat completions, so a reply's message count shows whether a client sent
// every message exactly once. Each response creation and each run counts as one request
// of its agent (Requests) and takes the agent's next scripted reply.

// services is what the stateful endpoints keep. Its mutex guards everything in it.
type services struct {
	mu           sync.Mutex
	seq          int64                        // last id number handed out
	responses    map[string]*storedResponse   // by response id
	lastResponse map[string][]byte            // the last Responses request body, by agent
	assistants   map[string]*openai.Assistant // by assistant id
	threads      map[string]*thread           // by thread id
	reported     *reported                    // the Server's, for the runs' usage
}

// newServices starts the id numbers at a random multiple of 1000 below 10^12, so that a
// new server (a restarted worker's) does not hand out the ids an earlier one did: an
// id from before the restart is unknown (404), as a real service's id from another
// project is, never another conversation's.
func newServices() *services {
	return &services{
		seq:          rand.Int64N(1e9) * 1000,
		responses:    map[string]*storedResponse{},
		lastResponse: map[string][]byte{},
		assistants:   map[string]*openai.Assistant{},
		threads:      map[string]*thread{},
	}
}

// newID returns "<prefix>_offline_<n>", unique in the server. v.mu must be held.
func (v *services) newID(prefix string) string {
	v.seq++
	return prefix + "_offline_" + strconv.FormatInt(v.seq, 10)
}

// serveService answers the paths of the stateful endpoints and reports whether path is
// one of them:
//
//	POST /v1/responses                          GET /v1/responses/{id}
//	POST /v1/assistants                         GET /v1/assistants/{id}
//	POST /v1/threads                            GET /v1/threads/{id}
//	POST, GET /v1/threads/{id}/messages         GET, POST /v1/threads/{id}/messages/{msg}
//	POST, GET /v1/threads/{id}/runs             GET /v1/threads/{id}/runs/{run}
//	POST /v1/threads/{id}/runs/{run}/cancel
func (s *Server) serveService(w http.ResponseWriter, r *http.Request, path string) bool {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return false
	}
	seg := strings.Split(rest, "/")
	switch {
	case seg[0] == "responses" && len(seg) == 1:
		if allowMethod(w, r, http.MethodPost) {
			s.createResponse(w, r)
		}
	case seg[0] == "responses" && len(seg) == 2:
		if allowMethod(w, r, http.MethodGet) {
			s.getResponse(w, seg[1])
		}
	case seg[0] == "assistants" && len(seg) == 1:
		if allowMethod(w, r, http.MethodPost) {
			s.createAssistant(w, r)
		}
	case seg[0] == "assistants" && len(seg) == 2:
		if allowMethod(w, r, http.MethodGet) {
			s.getAssistant(w, seg[1])
		}
	case seg[0] == "threads":
		return s.serveThreads(w, r, seg[1:])
	default:
		return false
	}
	return true
}

// requestError is an OpenAI-style error body of type invalid_request_error with code,
// and with param unless it is "" (writeError derives type and code from the status and
// has no param).
func requestError(code, param, message string) apiError {
	d := apiErrorDetail{Message: message, Type: "invalid_request_error", Code: &code}
	if param != "" {
		d.Param = &param
	}
	return apiError{Error: d}
}

// notFoundBody is the 404 body for an object the server does not hold, as OpenAI words
// it: "No thread found with id 'thread_x'.".
func notFoundBody(what, id string) apiError {
	return requestError("not_found", "", fmt.Sprintf("No %s found with id '%s'.", what, id))
}

// badRequestBody is the 400 body with message and no param.
func badRequestBody(message string) apiError {
	return requestError("invalid_value", "", message)
}

// notFound answers 404 with notFoundBody.
func notFound(w http.ResponseWriter, what, id string) {
	writeJSON(w, http.StatusNotFound, notFoundBody(what, id))
}

// badRequest answers 400 with message, naming param.
func badRequest(w http.ResponseWriter, param, message string) {
	writeJSON(w, http.StatusBadRequest, requestError("invalid_value", param, message))
}

// decodeBody reads r's JSON body, if it is not empty, into v and returns it. On failure
// it has refused the request (bodyError's 400 or 413, recorded in Violations) and
// returns false. Every endpoint that takes a body but Chat Completions (decodeRequest,
// refused the same way) reads it so.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err == nil && len(bytes.TrimSpace(body)) > 0 {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		status, err := bodyError(err)
		s.refuse(w, r, &Violation{Status: status, Message: err.Error()})
		return nil, false
	}
	return body, true
}

// withInstructions is msgs after a system message holding instructions, if any: the
// conversation as the model sees it, and as DefaultText counts it (like the system
// message of a chat completion).
func withInstructions(instructions string, msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	if instructions == "" {
		return msgs
	}
	out := make([]openai.ChatCompletionMessage, 0, len(msgs)+1)
	out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: instructions})
	return append(out, msgs...)
}

// page is one page of a list endpoint (messages, runs), as OpenAI pages them.
type page[T any] struct {
	Object  string  `json:"object"`
	Data    []T     `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// listPage orders items (held oldest first) by the request's order ("desc" by
// default), applies its after and before cursors (ids) and its limit (1-100, default
// 20). It returns the page, or an error whose text is the 400 message.
func listPage[T any](r *http.Request, items []T, id func(T) string) (page[T], error) {
	q := r.URL.Query()
	ordered := slices.Clone(items)
	switch q.Get("order") {
	case "", "desc":
		slices.Reverse(ordered)
	case "asc":
	default:
		return page[T]{}, fmt.Errorf("Invalid value for 'order': %q; use 'asc' or 'desc'.", q.Get("order"))
	}
	limit := 20
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			return page[T]{}, fmt.Errorf("Invalid value for 'limit': %q; use 1 to 100.", l)
		}
		limit = n
	}
	cut := func(cursor string, after bool) error {
		if cursor == "" {
			return nil
		}
		i := slices.IndexFunc(ordered, func(t T) bool { return id(t) == cursor })
		if i < 0 {
			return fmt.Errorf("Invalid cursor: no object with id %q.", cursor)
		}
		if after {
			ordered = ordered[i+1:]
		} else {
			ordered = ordered[:i]
		}
		return nil
	}
	if err := cut(q.Get("after"), true); err != nil {
		return page[T]{}, err
	}
	if err := cut(q.Get("before"), false); err != nil {
		return page[T]{}, err
	}
	p := page[T]{Object: "list", Data: ordered, HasMore: len(ordered) > limit}
	if p.HasMore {
		p.Data = ordered[:limit]
	}
	if p.Data == nil {
		p.Data = []T{}
	}
	if len(p.Data) > 0 {
		first, last := id(p.Data[0]), id(p.Data[len(p.Data)-1])
		p.FirstID, p.LastID = &first, &last
	}
	return p, nil
}
