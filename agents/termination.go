package agents

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
	// TerminationRegex completes the chat when the last agent message matches Pattern
	// (and also ends a turn after MaxIterations replies).
	TerminationRegex = "regex"
)

// TerminationStrategy decides when agents stop replying (Semantic Kernel's
// TerminationStrategy). JSON:
//
//	{"type":"maxIterations","maxIterations":4}
//	{"type":"regex","pattern":"(?i)approved","agents":["reviewer"],"maxIterations":6}
//
// Every strategy caps a turn at MaxIterations agent replies; reaching the cap ends the
// turn but does not complete the chat. A strategy that matches (regex) completes the
// chat: isComplete becomes true and the chat takes no more turns.
type TerminationStrategy struct {
	// Type is "maxIterations" (the default when empty) or "regex".
	Type string `json:"type,omitempty"`
	// MaxIterations is the most agent replies in one user turn; zero means one reply per
	// participant.
	MaxIterations int `json:"maxIterations,omitempty"`
	// Pattern is a Go regular expression (RE2 syntax) tested against the text of the
	// last agent message, for type "regex".
	Pattern string `json:"pattern,omitempty"`
	// Agents, if set, limits the regex to messages of these agent ids.
	Agents []string `json:"agents,omitempty"`
}

// TerminationState is what a termination strategy carries: {"iterations": n}, the agent
// replies so far in the current turn.
type TerminationState struct {
	Iterations int `json:"iterations"`
}

// Validate checks the strategy against the chat's participant ids.
func (t TerminationStrategy) Validate(ids []string) error {
	if t.MaxIterations < 0 {
		return fmt.Errorf("termination maxIterations must not be negative")
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
		for _, a := range t.Agents {
			if !slices.Contains(ids, a) {
				return fmt.Errorf("termination agent %q is not a participant", a)
			}
		}
	default:
		return fmt.Errorf("unknown termination strategy %q (known: %s, %s)", t.Type, TerminationMaxIterations, TerminationRegex)
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

// ShouldTerminate reports whether msg, the last agent message, completes the chat.
// Validate must have accepted t.
func (t TerminationStrategy) ShouldTerminate(msg chat.Message) bool {
	if t.Type != TerminationRegex {
		return false
	}
	if len(t.Agents) > 0 && !slices.Contains(t.Agents, msg.AgentID) {
		return false
	}
	return regexp.MustCompile(t.Pattern).MatchString(msg.Text())
}
