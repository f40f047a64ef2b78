package offline

import (
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// reported sums the usage the server reported, by agent (AgentHeader).
type reported struct {
	mu      sync.Mutex
	byAgent map[string]openai.Usage
}

func (r *reported) add(agent string, u openai.Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byAgent == nil {
		r.byAgent = map[string]openai.Usage{}
	}
	t := r.byAgent[agent]
	t.PromptTokens += u.PromptTokens
	t.CompletionTokens += u.CompletionTokens
	t.TotalTokens += u.TotalTokens
	r.byAgent[agent] = t
}

// ReportedUsage returns the sum of the usage the server reported to agent (the
// requests' AgentHeader) in Chat Completions answers (whole, or streamed with
// stream_options.include_usage: every stream it began), Responses and completed
// Assistants runs: prompt, completion and total tokens. Zero for an agent it never answered.
func (s *Server) ReportedUsage(agent string) openai.Usage {
	s.reported.mu.Lock()
	defer s.reported.mu.Unlock()
	return s.reported.byAgent[agent]
}
