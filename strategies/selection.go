package strategies

import (
	"fmt"
	"slices"
)

// Selection strategy types.
const (
	// SelectionSequential takes the participants in order, round robin, across turns.
	SelectionSequential = "sequential"
	// SelectionLLM asks a selector agent (Agent) which participant speaks next.
	SelectionLLM = "llm"
	// SelectionFunction asks a Go function registered on the worker (Function).
	SelectionFunction = "function"
	// FallbackSequential and FallbackError say what happens when an llm or function
	// selection names no participant: take the next in order, or fail the turn.
	FallbackSequential = "sequential"
	FallbackError      = "error"
)

// SelectionStrategy picks the agent that speaks next in a group chat (Semantic Kernel's
// SelectionStrategy). JSON:
//
//	{"type":"sequential","initialAgent":"writer"}
//	{"type":"llm","agent":"moderator","fallback":"sequential"}
//	{"type":"function","function":"byTopic","fallback":"error"}
type SelectionStrategy struct {
	// Type is "sequential" (the default when empty), "llm" or "function".
	Type string `json:"type,omitempty"`
	// InitialAgent, if set, speaks first in the chat (any type).
	InitialAgent string `json:"initialAgent,omitempty"`
	// Agent is the selector agent of "llm": an agent id of the registry, which need not
	// be a participant. It is asked to name the next participant.
	Agent string `json:"agent,omitempty"`
	// Function names the Go function of "function" (activities.Config.Functions.Selectors).
	Function string `json:"function,omitempty"`
	// Fallback applies when "llm" or "function" names no participant: "sequential"
	// (default) takes the next in order, "error" fails the turn naming what was said.
	Fallback string `json:"fallback,omitempty"`
}

// SelectionState is what a selection strategy carries between turns and through export:
// {"nextIndex": n}, the index in the participant list of the agent that speaks next.
type SelectionState struct {
	NextIndex int `json:"nextIndex"`
}

// Validate checks the strategy against the chat's participant ids.
func (s SelectionStrategy) Validate(ids []string) error {
	switch s.Type {
	case "", SelectionSequential:
	case SelectionLLM:
		if s.Agent == "" {
			return fmt.Errorf("selection %q needs an agent (the selector)", SelectionLLM)
		}
	case SelectionFunction:
		if s.Function == "" {
			return fmt.Errorf("selection %q needs a function name", SelectionFunction)
		}
	default:
		return fmt.Errorf("unknown selection strategy %q (known: %s, %s, %s)", s.Type, SelectionSequential, SelectionLLM, SelectionFunction)
	}
	switch s.Fallback {
	case "", FallbackSequential, FallbackError:
	default:
		return fmt.Errorf("unknown selection fallback %q (known: %s, %s)", s.Fallback, FallbackSequential, FallbackError)
	}
	if s.InitialAgent != "" && !slices.Contains(ids, s.InitialAgent) {
		return fmt.Errorf("selection initialAgent %q is not a participant", s.InitialAgent)
	}
	return nil
}

// Initial returns the state of a new chat.
func (s SelectionStrategy) Initial(ids []string) SelectionState {
	if i := slices.Index(ids, s.InitialAgent); i >= 0 {
		return SelectionState{NextIndex: i}
	}
	return SelectionState{}
}

// Next returns the id of the agent to speak now and advances st. ids must be non-empty.
func (s SelectionStrategy) Next(ids []string, st *SelectionState) string {
	i := st.NextIndex % len(ids)
	if i < 0 {
		i += len(ids)
	}
	st.NextIndex = (i + 1) % len(ids)
	return ids[i]
}
