package strategies

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/agentchat/agentchat/chat"
)

// Termination strategy types.
const (
	// TerminationMaxIterations ends a turn after MaxIterations agent replies.
	TerminationMaxIterations = "maxIterations"
	// TerminationRegex completes the chat when the last agent message matches Pattern.
	TerminationRegex = "regex"
	// TerminationLLM asks a judge agent (Agent) whether the chat has reached its goal.
	TerminationLLM = "llm"
	// TerminationFunction asks a Go function registered on the worker (Function).
	TerminationFunction = "function"
	// TerminationAny completes the chat when any of Strategies says so.
	TerminationAny = "any"
	// TerminationAll completes the chat when all of Strategies say so.
	TerminationAll = "all"
)

// TerminationStrategy decides when agents stop replying (Semantic Kernel's
// TerminationStrategy). JSON:
//
//	{"type":"maxIterations","maxIterations":4}
//	{"type":"regex","pattern":"(?i)approved","agents":["reviewer"],"maxIterations":6}
//	{"type":"llm","agent":"judge"}
//	{"type":"any","strategies":[{"type":"regex","pattern":"DONE"},{"type":"llm","agent":"judge"}],"autoReset":true}
//
// Every strategy caps a turn at MaxIterations agent replies (of the top-level
// strategy); reaching the cap ends the turn but does not complete the chat. A strategy
// that says so completes the chat: isComplete becomes true and, unless AutoReset, the
// chat takes no more turns. With AutoReset the next user turn starts afresh.
type TerminationStrategy struct {
	// Type is "maxIterations" (the default when empty), "regex", "llm", "function",
	// "any" or "all".
	Type string `json:"type,omitempty"`
	// MaxIterations is the most agent replies in one user turn; zero means one reply per
	// participant.
	MaxIterations int `json:"maxIterations,omitempty"`
	// Pattern is a Go regular expression (RE2 syntax) tested against the text of the
	// last agent message, for type "regex".
	Pattern string `json:"pattern,omitempty"`
	// Agents, if set, limits the strategy to messages of these agent ids.
	Agents []string `json:"agents,omitempty"`
	// Agent is the judge agent of "llm" (an agent id of the registry): asked whether the
	// conversation has reached its goal, it answers yes or no.
	Agent string `json:"agent,omitempty"`
	// Function names the Go function of "function" (activities.Config.Functions.Judges).
	Function string `json:"function,omitempty"`
	// Strategies are the parts of "any" and "all".
	Strategies []TerminationStrategy `json:"strategies,omitempty"`
	// AutoReset keeps the chat open after it completes: the next user turn resets
	// isComplete and the iteration count.
	AutoReset bool `json:"autoReset,omitempty"`
}

// TerminationState is what a termination strategy carries: {"iterations": n}, the agent
// replies so far in the current turn.
type TerminationState struct {
	Iterations int `json:"iterations"`
}

// Validate checks the strategy (and its parts) against the chat's participant ids.
func (t TerminationStrategy) Validate(ids []string) error {
	if t.MaxIterations < 0 {
		return fmt.Errorf("termination maxIterations must not be negative")
	}
	for _, a := range t.Agents {
		if !slices.Contains(ids, a) {
			return fmt.Errorf("termination agent %q is not a participant", a)
		}
	}
	switch t.Type {
	case "", TerminationMaxIterations:
		if t.Pattern != "" || len(t.Agents) > 0 {
			return fmt.Errorf("termination %q takes no pattern or agents", TerminationMaxIterations)
		}
	case TerminationRegex:
		if t.Pattern == "" {
			return fmt.Errorf("termination %q needs a pattern", TerminationRegex)
		}
		if _, err := regexp.Compile(t.Pattern); err != nil {
			return fmt.Errorf("termination pattern: %w", err)
		}
	case TerminationLLM:
		if t.Agent == "" {
			return fmt.Errorf("termination %q needs an agent (the judge)", TerminationLLM)
		}
	case TerminationFunction:
		if t.Function == "" {
			return fmt.Errorf("termination %q needs a function name", TerminationFunction)
		}
	case TerminationAny, TerminationAll:
		if len(t.Strategies) == 0 {
			return fmt.Errorf("termination %q needs strategies", t.Type)
		}
		for i, part := range t.Strategies {
			if err := part.Validate(ids); err != nil {
				return fmt.Errorf("termination %s[%d]: %w", t.Type, i, err)
			}
		}
	default:
		return fmt.Errorf("unknown termination strategy %q (known: %s, %s, %s, %s, %s, %s)", t.Type,
			TerminationMaxIterations, TerminationRegex, TerminationLLM, TerminationFunction, TerminationAny, TerminationAll)
	}
	return nil
}

// Limit returns the reply cap of one turn for a chat of n participants.
func (t TerminationStrategy) Limit(n int) int {
	if t.MaxIterations > 0 {
		return t.MaxIterations
	}
	return n
}

// Applies reports whether the strategy looks at a message by this agent.
func (t TerminationStrategy) Applies(agentID string) bool {
	return len(t.Agents) == 0 || slices.Contains(t.Agents, agentID)
}

// ShouldTerminate reports whether msg, the last agent message, completes the chat,
// for the one strategy that needs neither a model nor a function, "regex"; Validate
// must have accepted t. Every other type reports false: the workflow asks the worker
// for "llm" and "function" and combines the parts of "any" and "all" itself.
func (t TerminationStrategy) ShouldTerminate(msg chat.Message) bool {
	return t.Type == TerminationRegex && t.Applies(msg.AgentID) && regexp.MustCompile(t.Pattern).MatchString(msg.Text())
}

// JudgeAgents returns the judge agent ids a strategy tree names.
func (t TerminationStrategy) JudgeAgents() []string {
	var out []string
	if t.Type == TerminationLLM {
		out = append(out, t.Agent)
	}
	for _, p := range t.Strategies {
		out = append(out, p.JudgeAgents()...)
	}
	return out
}
