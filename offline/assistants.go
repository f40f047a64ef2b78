package offline

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// runStep is how long a run stays queued, and then in_progress (plus Options.Latency
// and the reply's Delay), before it ends.
const runStep = 25 * time.Millisecond

// thread is an Assistants thread: its messages and runs, oldest first.
type thread struct {
	obj      openai.Thread
	messages []openai.Message
	runs     []*runState
}

// runState is a run and what decides its outcome.
type runState struct {
	run     openai.Run
	agent   string
	reply   Reply
	seq     int
	startAt time.Time // queued until then
	readyAt time.Time // in_progress until then
}

// messageRequest is a message as clients send it: to POST .../messages, in a new
// thread's "messages", or in a run's "additional_messages". Content is a string or a
// list of parts, of which the "text" ones are read.
type messageRequest struct {
	Role     string          `json:"role"`
	Content  json.RawMessage `json:"content"`
	Metadata map[string]any  `json:"metadata"`
}

// runRequest is the part of a run creation the server reads.
type runRequest struct {
	AssistantID            string           `json:"assistant_id"`
	Model                  string           `json:"model"`
	Instructions           string           `json:"instructions"`
	AdditionalInstructions string           `json:"additional_instructions"`
	AdditionalMessages     []messageRequest `json:"additional_messages"`
	Metadata               map[string]any   `json:"metadata"`
}

// createAssistant answers POST /v1/assistants: the assistant is kept with its model,
// name and instructions (tools are not kept: the offline model calls tools only when
// scripted).
func (s *Server) createAssistant(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model        string         `json:"model"`
		Name         *string        `json:"name"`
		Description  *string        `json:"description"`
		Instructions *string        `json:"instructions"`
		Metadata     map[string]any `json:"metadata"`
	}
	if _, ok := s.decodeBody(w, r, &req); !ok {
		return
	}
	if req.Model == "" {
		badRequest(w, "model", "Missing required parameter: 'model'.")
		return
	}
	s.svc.mu.Lock()
	a := &openai.Assistant{ID: s.svc.newID("asst"), Object: "assistant", CreatedAt: time.Now().Unix(),
		Name: req.Name, Description: req.Description, Model: req.Model, Instructions: req.Instructions,
		Tools: []openai.AssistantTool{}, Metadata: req.Metadata}
	s.svc.assistants[a.ID] = a
	out := *a
	s.svc.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// getAssistant answers GET /v1/assistants/{id}.
func (s *Server) getAssistant(w http.ResponseWriter, id string) {
	s.svc.mu.Lock()
	a, ok := s.svc.assistants[id]
	var out openai.Assistant
	if ok {
		out = *a
	}
	s.svc.mu.Unlock()
	if !ok {
		notFound(w, "assistant", id)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// serveThreads answers the paths below /v1/threads (seg is what follows it) and
// reports whether it knew the path.
func (s *Server) serveThreads(w http.ResponseWriter, r *http.Request, seg []string) bool {
	if len(seg) == 0 {
		if allowMethod(w, r, http.MethodPost) {
			s.createThread(w, r)
		}
		return true
	}
	id := seg[0]
	switch {
	case len(seg) == 1:
		if allowMethod(w, r, http.MethodGet) {
			s.onThread(w, id, func(th *thread) (int, any) { return http.StatusOK, th.obj })
		}
	case seg[1] == "messages" && len(seg) == 2:
		if allowMethods(w, r, http.MethodPost, http.MethodGet) {
			if r.Method == http.MethodPost {
				s.createMessage(w, r, id)
			} else {
				s.listMessages(w, r, id)
			}
		}
	case seg[1] == "messages" && len(seg) == 3:
		if allowMethods(w, r, http.MethodGet, http.MethodPost) {
			s.message(w, r, id, seg[2])
		}
	case seg[1] == "runs" && len(seg) == 2:
		if allowMethods(w, r, http.MethodPost, http.MethodGet) {
			if r.Method == http.MethodPost {
				s.createRun(w, r, id)
			} else {
				s.listRuns(w, r, id)
			}
		}
	case seg[1] == "runs" && len(seg) == 3:
		if allowMethod(w, r, http.MethodGet) {
			s.onThread(w, id, func(th *thread) (int, any) {
				if rs := th.run(seg[2]); rs != nil {
					return http.StatusOK, rs.run
				}
				return http.StatusNotFound, notFoundBody("run", seg[2])
			})
		}
	case seg[1] == "runs" && len(seg) == 4 && seg[3] == "cancel":
		if allowMethod(w, r, http.MethodPost) {
			s.onThread(w, id, func(th *thread) (int, any) { return cancelRun(th, seg[2]) })
		}
	default:
		return false
	}
	return true
}

// onThread runs f on thread id, its runs brought up to now, with the services locked,
// and answers what f returns; 404 when there is no such thread.
func (s *Server) onThread(w http.ResponseWriter, id string, f func(th *thread) (int, any)) {
	s.svc.mu.Lock()
	th, ok := s.svc.threads[id]
	var (
		status int
		body   any
	)
	if ok {
		s.svc.advance(th, time.Now())
		status, body = f(th)
	}
	s.svc.mu.Unlock()
	if !ok {
		notFound(w, "thread", id)
		return
	}
	writeJSON(w, status, body)
}

// createThread answers POST /v1/threads, with the optional "messages" added in order.
func (s *Server) createThread(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []messageRequest `json:"messages"`
		Metadata map[string]any   `json:"metadata"`
	}
	if _, ok := s.decodeBody(w, r, &req); !ok {
		return
	}
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	th := &thread{obj: openai.Thread{ID: s.svc.newID("thread"), Object: "thread", CreatedAt: time.Now().Unix(),
		Metadata: req.Metadata}}
	if th.obj.Metadata == nil {
		th.obj.Metadata = map[string]any{}
	}
	for i, m := range req.Messages {
		if _, err := s.svc.addMessage(th, m); err != nil {
			badRequest(w, fmt.Sprintf("messages[%d]", i), err.Error())
			return
		}
	}
	s.svc.threads[th.obj.ID] = th
	writeJSON(w, http.StatusOK, th.obj)
}

// createMessage answers POST /v1/threads/{id}/messages; refused (400) while a run of the
// thread is active, as OpenAI refuses it.
func (s *Server) createMessage(w http.ResponseWriter, r *http.Request, id string) {
	var req messageRequest
	if _, ok := s.decodeBody(w, r, &req); !ok {
		return
	}
	s.onThread(w, id, func(th *thread) (int, any) {
		if rs := th.active(); rs != nil {
			return http.StatusBadRequest, badRequestBody(fmt.Sprintf(
				"Can't add messages to %s while a run %s is active.", th.obj.ID, rs.run.ID))
		}
		m, err := s.svc.addMessage(th, req)
		if err != nil {
			return http.StatusBadRequest, badRequestBody(err.Error())
		}
		return http.StatusOK, m
	})
}

// listMessages answers GET /v1/threads/{id}/messages: newest first unless order=asc,
// with limit, after, before and run_id as OpenAI defines them.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request, id string) {
	s.onThread(w, id, func(th *thread) (int, any) {
		msgs := th.messages
		if runID := r.URL.Query().Get("run_id"); runID != "" {
			msgs = slices.DeleteFunc(slices.Clone(msgs), func(m openai.Message) bool { return m.RunID == nil || *m.RunID != runID })
		}
		p, err := listPage(r, msgs, func(m openai.Message) string { return m.ID })
		if err != nil {
			return http.StatusBadRequest, badRequestBody(err.Error())
		}
		return http.StatusOK, p
	})
}

// message answers GET (retrieve) and POST (modify: its metadata keys are set) on
// /v1/threads/{id}/messages/{msg}.
func (s *Server) message(w http.ResponseWriter, r *http.Request, id, msgID string) {
	var req struct {
		Metadata map[string]any `json:"metadata"`
	}
	if r.Method == http.MethodPost {
		if _, ok := s.decodeBody(w, r, &req); !ok {
			return
		}
	}
	s.onThread(w, id, func(th *thread) (int, any) {
		i := slices.IndexFunc(th.messages, func(m openai.Message) bool { return m.ID == msgID })
		if i < 0 {
			return http.StatusNotFound, notFoundBody("message", msgID)
		}
		m := &th.messages[i]
		for k, v := range req.Metadata {
			if m.Metadata == nil {
				m.Metadata = map[string]any{}
			}
			m.Metadata[k] = v
		}
		return http.StatusOK, *m
	})
}

// addMessage appends a message to th: role user or assistant, and some text. v.mu must
// be held.
func (v *services) addMessage(th *thread, req messageRequest) (openai.Message, error) {
	if req.Role != openai.ChatMessageRoleUser && req.Role != openai.ChatMessageRoleAssistant {
		return openai.Message{}, fmt.Errorf("Invalid value for 'role': %q; use 'user' or 'assistant'.", req.Role)
	}
	text := messageRequestText(req.Content)
	if strings.TrimSpace(text) == "" {
		return openai.Message{}, errors.New("Invalid 'content': a message needs some text.")
	}
	return v.appendMessage(th, req.Role, text, req.Metadata, "", ""), nil
}

// appendMessage appends a message of role with text to th; runID and assistantID are
// set for a message a run wrote. v.mu must be held.
func (v *services) appendMessage(th *thread, role, text string, metadata map[string]any, runID, assistantID string) openai.Message {
	m := openai.Message{ID: v.newID("msg"), Object: "thread.message", CreatedAt: int(time.Now().Unix()),
		ThreadID: th.obj.ID, Role: role, FileIds: []string{}, Metadata: metadata,
		Content: []openai.MessageContent{{Type: "text", Text: &openai.MessageText{Value: text, Annotations: []any{}}}}}
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	if runID != "" {
		m.RunID, m.AssistantID = &runID, &assistantID
	}
	th.messages = append(th.messages, m)
	return m
}

// messageRequestText is a message's content: the string, or its text parts joined by
// a newline.
func messageRequestText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// threadMessageText is the text of a thread message.
func threadMessageText(m openai.Message) string {
	var texts []string
	for _, c := range m.Content {
		if c.Text != nil {
			texts = append(texts, c.Text.Value)
		}
	}
	return strings.Join(texts, "\n")
}

// createRun answers POST /v1/threads/{id}/runs. It counts the request against the
// agent's script. A scripted error with status 429 or 5xx makes a run that fails (code
// rate_limit_exceeded or server_error, with the scripted message), as a real run
// fails; any other scripted status is an HTTP error at once. Scripted tool calls make
// a run that requires action (submit_tool_outputs). Otherwise the run completes after
// runStep*2 plus Options.Latency plus the reply's Delay, adding one assistant message to
// the thread: the scripted text, or the default reply computed from the whole thread
// after a system message with the run's instructions (the request's, else the
// assistant's, plus any additional_instructions).
func (s *Server) createRun(w http.ResponseWriter, r *http.Request, id string) {
	agent := agentOf(r)
	reply, seq := s.ledger.next(agent, chatOf(r))
	var req runRequest
	if _, ok := s.decodeBody(w, r, &req); !ok {
		return
	}
	if reply.Status != 0 && !failsAsRun(reply.Status) {
		s.log.Debug("offline: scripted error", "agent", agent, "request", seq, "status", reply.Status)
		writeError(w, reply.Status, reply.Message, reply.RetryAfter)
		return
	}
	s.onThread(w, id, func(th *thread) (int, any) {
		if req.AssistantID == "" {
			return http.StatusBadRequest, badRequestBody("Missing required parameter: 'assistant_id'.")
		}
		a, ok := s.svc.assistants[req.AssistantID]
		if !ok {
			return http.StatusNotFound, notFoundBody("assistant", req.AssistantID)
		}
		if rs := th.active(); rs != nil {
			return http.StatusBadRequest, badRequestBody(fmt.Sprintf("Thread %s already has an active run %s.", th.obj.ID, rs.run.ID))
		}
		for _, m := range req.AdditionalMessages {
			if _, err := s.svc.addMessage(th, m); err != nil {
				return http.StatusBadRequest, badRequestBody(err.Error())
			}
		}
		now := time.Now()
		rs := &runState{agent: agent, reply: reply, seq: seq, startAt: now.Add(runStep),
			readyAt: now.Add(2*runStep + s.opts.Latency + time.Duration(reply.Delay))}
		rs.run = openai.Run{ID: s.svc.newID("run"), Object: "thread.run", CreatedAt: now.Unix(),
			ThreadID: th.obj.ID, AssistantID: a.ID, Status: openai.RunStatusQueued,
			ExpiresAt: now.Add(10 * time.Minute).Unix(), Model: cmp.Or(req.Model, a.Model),
			Instructions: runInstructions(req, a), Tools: []openai.Tool{}, FileIDS: []string{}, Metadata: req.Metadata}
		if rs.run.Metadata == nil {
			rs.run.Metadata = map[string]any{}
		}
		th.runs = append(th.runs, rs)
		s.log.Debug("offline: run", "agent", agent, "request", seq, "thread", th.obj.ID, "messages", len(th.messages))
		return http.StatusOK, rs.run
	})
}

// failsAsRun reports whether a scripted error status makes a failed run (429, 5xx)
// rather than an HTTP error.
func failsAsRun(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// runInstructions is the request's instructions, else the assistant's, then any
// additional instructions after a blank line.
func runInstructions(req runRequest, a *openai.Assistant) string {
	instr := req.Instructions
	if instr == "" && a.Instructions != nil {
		instr = *a.Instructions
	}
	if req.AdditionalInstructions != "" {
		instr = strings.TrimSpace(instr + "\n\n" + req.AdditionalInstructions)
	}
	return instr
}

// listRuns answers GET /v1/threads/{id}/runs, newest first unless order=asc.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, id string) {
	s.onThread(w, id, func(th *thread) (int, any) {
		runs := make([]openai.Run, len(th.runs))
		for i, rs := range th.runs {
			runs[i] = rs.run
		}
		p, err := listPage(r, runs, func(r openai.Run) string { return r.ID })
		if err != nil {
			return http.StatusBadRequest, badRequestBody(err.Error())
		}
		return http.StatusOK, p
	})
}

// cancelRun cancels an active run of th.
func cancelRun(th *thread, runID string) (int, any) {
	rs := th.run(runID)
	if rs == nil {
		return http.StatusNotFound, notFoundBody("run", runID)
	}
	if !activeStatus(rs.run.Status) {
		return http.StatusBadRequest, badRequestBody(fmt.Sprintf("Cannot cancel run with status '%s'.", rs.run.Status))
	}
	now := time.Now().Unix()
	rs.run.Status, rs.run.CancelledAt, rs.run.RequiredAction = openai.RunStatusCancelled, &now, nil
	return http.StatusOK, rs.run
}

// run is th's run runID, or nil.
func (th *thread) run(runID string) *runState {
	for _, rs := range th.runs {
		if rs.run.ID == runID {
			return rs
		}
	}
	return nil
}

// active is th's run that has not ended, or nil.
func (th *thread) active() *runState {
	for _, rs := range th.runs {
		if activeStatus(rs.run.Status) {
			return rs
		}
	}
	return nil
}

func activeStatus(st openai.RunStatus) bool {
	switch st {
	case openai.RunStatusQueued, openai.RunStatusInProgress, openai.RunStatusRequiresAction, openai.RunStatusCancelling:
		return true
	}
	return false
}

// advance brings th's runs to the state they have at now: queued until startAt, then
// in_progress until readyAt, then ended. v.mu must be held.
func (v *services) advance(th *thread, now time.Time) {
	for _, rs := range th.runs {
		switch rs.run.Status {
		case openai.RunStatusQueued:
			if now.Before(rs.startAt) {
				continue
			}
			started := rs.startAt.Unix()
			rs.run.Status, rs.run.StartedAt = openai.RunStatusInProgress, &started
			fallthrough
		case openai.RunStatusInProgress:
			if now.Before(rs.readyAt) {
				continue
			}
			v.finish(th, rs)
		}
	}
}

// finish ends an in-progress run by its reply: failed, requires_action, or completed
// with one assistant message. v.mu must be held.
func (v *services) finish(th *thread, rs *runState) {
	at := rs.readyAt.Unix()
	switch r := rs.reply; {
	case r.Status != 0:
		code := openai.RunErrorServerError
		if r.Status == http.StatusTooManyRequests {
			code = openai.RunErrorRateLimitExceeded
		}
		msg := r.Message
		if msg == "" {
			msg = http.StatusText(r.Status)
		}
		rs.run.Status, rs.run.FailedAt = openai.RunStatusFailed, &at
		rs.run.LastError = &openai.RunLastError{Code: code, Message: msg}
	case len(r.ToolCalls) > 0:
		rs.run.Status = openai.RunStatusRequiresAction
		rs.run.RequiredAction = &openai.RunRequiredAction{Type: openai.RequiredActionTypeSubmitToolOutputs,
			SubmitToolOutputs: &openai.SubmitToolOutputs{ToolCalls: toolCalls(r.ToolCalls, strings.TrimPrefix(rs.run.ID, "run_offline_"))}}
	default:
		msgs := withInstructions(rs.run.Instructions, threadConversation(th))
		text := scriptedText(rs.agent, r)
		if r.isDefault() {
			text = DefaultText(rs.agent, msgs)
		}
		v.appendMessage(th, openai.ChatMessageRoleAssistant, text, nil, rs.run.ID, rs.run.AssistantID)
		u := usage(msgs, answer{content: text})
		rs.run.Status, rs.run.CompletedAt, rs.run.Usage = openai.RunStatusCompleted, &at, u
		if v.reported != nil {
			v.reported.add(rs.agent, u)
		}
	}
}

// threadConversation is th's messages as chat messages, oldest first.
func threadConversation(th *thread) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(th.messages))
	for i, m := range th.messages {
		out[i] = openai.ChatCompletionMessage{Role: m.Role, Content: threadMessageText(m)}
	}
	return out
}

// ThreadMessages is thread id's messages, oldest first (its runs brought up to now),
// and whether the thread exists.
func (s *Server) ThreadMessages(id string) ([]openai.Message, bool) {
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	th, ok := s.svc.threads[id]
	if !ok {
		return nil, false
	}
	s.svc.advance(th, time.Now())
	return slices.Clone(th.messages), true
}
