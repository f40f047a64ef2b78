package agents

import (
	"fmt"

	"github.com/agentchat/agentchat/chat"
)

// Reducer types.
const (
	// ReducerNone sends the whole history.
	ReducerNone = "none"
	// ReducerTruncate sends the system messages and the most recent messages, at most
	// MaxMessages in all, never starting with a tool result cut off from its call.
	ReducerTruncate = "truncate"
)

// Reducer shortens the history a chat_history channel sends to its model (Semantic
// Kernel's ChatHistoryReducer). JSON: {"type":"truncate","maxMessages":20}. The zero
// value sends everything.
type Reducer struct {
	Type        string `json:"type,omitempty"`
	MaxMessages int    `json:"maxMessages,omitempty"`
}

// Validate checks the reducer's settings.
func (r Reducer) Validate() error {
	switch r.Type {
	case "", ReducerNone:
		return nil
	case ReducerTruncate:
		if r.MaxMessages < 2 {
			return fmt.Errorf("reducer %q needs maxMessages of at least 2", ReducerTruncate)
		}
		return nil
	}
	return fmt.Errorf("unknown reducer %q (known: %s, %s)", r.Type, ReducerNone, ReducerTruncate)
}

// Key is the reducer's part of a channel key: agents with different reducers see
// different histories, so they have different channels.
func (r Reducer) Key() string {
	if r.Type == "" || r.Type == ReducerNone {
		return ReducerNone
	}
	return fmt.Sprintf("%s:%d", r.Type, r.MaxMessages)
}

// Reduce returns the messages to send: for truncate, every system message plus the
// latest messages so that at most MaxMessages remain; if the cut would start with a
// tool message (a function result whose call was cut off), it moves forward past it,
// so a call is never split from its result. The input is not modified.
func (r Reducer) Reduce(history []chat.Message) []chat.Message {
	if r.Type != ReducerTruncate || len(history) <= r.MaxMessages {
		return history
	}
	var system, rest []chat.Message
	for _, m := range history {
		if m.Role == chat.RoleSystem {
			system = append(system, m)
		} else {
			rest = append(rest, m)
		}
	}
	keep := max(r.MaxMessages-len(system), 1)
	start := max(len(rest)-keep, 0)
	for start < len(rest)-1 && rest[start].Role == chat.RoleTool {
		start++
	}
	return append(system, rest[start:]...)
}
