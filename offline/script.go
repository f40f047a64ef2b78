package offline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentchat/agentchat/wire"
)

// agentState is what the server remembers about one agent.
type agentState struct {
	script   []Reply                       // scripted replies
	requests int                           // model requests so far (since the last SetScript)
	position map[string]int                // the next script index, by chat, for requests without AuthorHeader
	errors   map[attempt]int               // scripted errors answered, by chat and script position
	last     *openai.ChatCompletionRequest // last successfully decoded request; nil before one
}

// attempt is one script position of one chat.
type attempt struct {
	chat string
	pos  int
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

// count counts one model request of agent and returns the server-wide request number,
// starting at 1.
func (l *ledger) count(agent string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state(agent).requests++
	l.total++
	return l.total
}

// next is count and reply at the chat's next position: the script followed request by
// request, for the endpoints whose requests do not carry the agent's own replies.
func (l *ledger) next(agent, chat string) (reply Reply, seq int) {
	seq = l.count(agent)
	return l.reply(agent, chat, -1), seq
}

// reply is agent's scripted reply at position pos of chat (the zero Reply, meaning
// the default reply, past the end of the script). The script's answers (text, tool
// calls, the default reply) are its entries without a Status; position p takes the
// p-th of them, 0-based. The errors (entries with a Status) listed just before that
// answer are answered first, each once per chat and position in this server, so a
// retried request meets each scripted error once and then gets the answer. A pos below
// zero means the chat's next position by request count, every attempt counting, as
// for requests that do not say whose replies they hold (scriptPosition).
func (l *ledger) reply(agent, chat string, pos int) Reply {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state(agent)
	if pos < 0 {
		if st.position == nil {
			st.position = map[string]int{}
		}
		i := st.position[chat]
		st.position[chat]++
		if i < len(st.script) {
			return st.script[i]
		}
		return Reply{}
	}
	answer, errs := scriptAt(st.script, pos)
	key := attempt{chat, pos}
	if n := st.errors[key]; n < len(errs) {
		if st.errors == nil {
			st.errors = map[attempt]int{}
		}
		st.errors[key] = n + 1
		return errs[n]
	}
	return answer
}

// scriptAt is the pos-th answer of script (the zero Reply past its end) and the errors
// listed right before it.
func scriptAt(script []Reply, pos int) (answer Reply, errs []Reply) {
	k, from := 0, 0
	for i, r := range script {
		if r.Status != 0 {
			continue
		}
		if k == pos {
			return r, script[from:i]
		}
		k, from = k+1, i+1
	}
	if k == pos {
		return Reply{}, script[from:]
	}
	return Reply{}, nil
}

// record keeps req as agent's last request.
func (l *ledger) record(agent string, req openai.ChatCompletionRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state(agent).last = &req
}

// AuthorHeader is the request header in which agentchat's model activity gives, on an
// agent's own model call (not a selector's, judge's or summary's), the "name" its
// replies carry in the request's assistant messages ("" when they carry none).
const AuthorHeader = wire.AuthorHeader

// scriptPosition is where in its script the agent of r is, by the conversation msgs
// the request carries: the number of its own replies in it (the assistant messages
// whose name is r's AuthorHeader). So a scripted chat (a tool call, the answer to its
// result, the next turn's reply) goes on where it was in any process: after a worker
// restart, after an approval, after a retry. A reducer that leaves replies out of what
// the agent is sent moves it back by as many. It is -1 (the chat's next position by
// request count) when r has no AuthorHeader: a selector or judge, whose answers are
// never part of what it is sent, or a client other than agentchat.
func scriptPosition(r *http.Request, msgs []openai.ChatCompletionMessage) int {
	author, ok := r.Header[http.CanonicalHeaderKey(AuthorHeader)]
	if !ok {
		return -1
	}
	name := strings.TrimSpace(strings.Join(author, ""))
	n := 0
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleAssistant && m.Name == name {
			n++
		}
	}
	return n
}

// conversationKey names a conversation: the first 12 hex digits of the SHA-256 of msgs
// as JSON.
func conversationKey(msgs []openai.ChatCompletionMessage) string {
	b, _ := json.Marshal(msgs) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// SetScript replaces agent's script with a copy of replies and resets its request
// counter and the scripted errors answered: a request without AuthorHeader then gets
// replies[0], an agent's own call the answer at its place in its conversation (see
// Options.Scripts). A nil or empty replies means default replies only. It is safe for concurrent use; a request already being answered keeps
// the reply it was given.
func (s *Server) SetScript(agent string, replies []Reply) {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	st := s.ledger.state(agent)
	st.script = slices.Clone(replies)
	st.requests, st.position, st.errors = 0, nil, nil
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
