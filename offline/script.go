package offline

import (
	"slices"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// agentState is what the server remembers about one agent.
type agentState struct {
	script   []Reply                       // scripted replies, by request index
	requests int                           // model requests so far (since the last SetScript)
	position map[string]int                // the next script index, by chat (ChatHeader)
	last     *openai.ChatCompletionRequest // last successfully decoded request; nil before one
}

// ledger counts requests and hands out scripted replies, per agent. It is safe for
// concurrent use.
type ledger struct {
	mu     sync.Mutex
	agents map[string]*agentState
	total  int // all model requests, of every agent
}

// newLedger copies scripts so later changes by the caller do not reach the server.
func newLedger(scripts map[string][]Reply) *ledger {
	l := &ledger{agents: make(map[string]*agentState, len(scripts))}
	for agent, replies := range scripts {
		l.agents[agent] = &agentState{script: slices.Clone(replies)}
	}
	return l
}

// state returns agent's state, creating it. l.mu must be held.
func (l *ledger) state(agent string) *agentState {
	st, ok := l.agents[agent]
	if !ok {
		st = &agentState{}
		l.agents[agent] = st
	}
	return st
}

// next counts one request of agent in chat and returns its scripted reply (the zero
// Reply, meaning the default reply, past the end of the script) and the server-wide
// request number, starting at 1. Each chat (the ChatHeader; "" for requests without
// it) follows the script from its start, so a worker's second chat gets the same
// scripted conversation as its first.
func (l *ledger) next(agent, chat string) (reply Reply, seq int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state(agent)
	if st.position == nil {
		st.position = map[string]int{}
	}
	if i := st.position[chat]; i < len(st.script) {
		reply = st.script[i]
	}
	st.position[chat]++
	st.requests++
	l.total++
	return reply, l.total
}

// record keeps req as agent's last request.
func (l *ledger) record(agent string, req openai.ChatCompletionRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state(agent).last = &req
}

// SetScript replaces agent's script with a copy of replies and resets its request counter,
// so the next request of agent gets replies[0]. A nil or empty replies means default
// replies only. It is safe for concurrent use; a request already being answered keeps
// the reply it was given.
func (s *Server) SetScript(agent string, replies []Reply) {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	st := s.ledger.state(agent)
	st.script = slices.Clone(replies)
	st.requests, st.position = 0, nil
}

// Requests is how many model requests (chat completions, response creations, runs)
// agent made since the server started or since its last SetScript: every attempt,
// including those answered with an error. It is safe for concurrent use.
func (s *Server) Requests(agent string) int {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	if st, ok := s.ledger.agents[agent]; ok {
		return st.requests
	}
	return 0
}

// TotalRequests is how many model requests all agents made since the server
// started (SetScript does not reset it). It is safe for concurrent use.
func (s *Server) TotalRequests() int {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	return s.ledger.total
}

// LastRequest is the last chat-completion request body agent sent that decoded, and
// whether there was one. Its Messages slice is a copy the caller may change.
func (s *Server) LastRequest(agent string) (openai.ChatCompletionRequest, bool) {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	st, ok := s.ledger.agents[agent]
	if !ok || st.last == nil {
		return openai.ChatCompletionRequest{}, false
	}
	req := *st.last
	req.Messages = slices.Clone(req.Messages)
	return req, true
}
