package agents

import (
	"fmt"
	"slices"
)

// Selection strategy types.
const (
	// SelectionSequential takes the participants in order, round robin, across turns.
	SelectionSequential = "sequential"
)

// SelectionStrategy picks the agent that speaks next in a group chat (Semantic Kernel's
// SelectionStrategy). JSON: {"type":"sequential","initialAgent":"writer"?}.
type SelectionStrategy struct {
	// Type is "sequential" (the default when empty).
	Type string `json:"type,omitempty"`
	// InitialAgent, if set, speaks first in the chat; the order continues from it.
	InitialAgent string `json:"initialAgent,omitempty"`
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
	default:
		return fmt.Errorf("unknown selection strategy %q (known: %s)", s.Type, SelectionSequential)
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
