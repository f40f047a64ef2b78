package strategies

import (
	"encoding/json"
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
	// ReducerSummarize replaces the older messages by a summary the agent's own model
	// writes, once more than MaxMessages are unsummarized; the latest Keep stay as they
	// are. The summary and where it ends are the channel's state.
	ReducerSummarize = "summarize"
)

// Reducer shortens the history a chat_history channel sends to its model (Semantic
// Kernel's ChatHistoryReducer). JSON: {"type":"truncate","maxMessages":20}. The zero
// value sends everything.
type Reducer struct {
	Type        string `json:"type,omitempty"`
	MaxMessages int    `json:"maxMessages,omitempty"`
	// Keep is how many recent messages a summary leaves out (summarize); zero means
	// half of MaxMessages.
	Keep int `json:"keep,omitempty"`
}

// SummaryState is the channel state of a summarizing reducer (chat-state-v1.md: "a
// chat-history channel holds its reducer state (e.g. a summary and where it ends)"):
// {"summary":"…","summarizedThrough":"<messageId>"}.
type SummaryState struct {
	Summary           string `json:"summary,omitempty"`
	SummarizedThrough string `json:"summarizedThrough,omitempty"`
}

// ParseSummaryState reads a channel state; an empty or unreadable one is no summary yet.
func ParseSummaryState(b json.RawMessage) SummaryState {
	var st SummaryState
	_ = json.Unmarshal(b, &st)
	return st
}

// SummaryPrefix starts the system message that carries a summary to the model.
const SummaryPrefix = "Summary of the earlier conversation: "

// ReduceWith is Reduce for reducers with channel state: for summarize, the system
// messages, the summary (as a system message) and the messages after the summary.
func (r Reducer) ReduceWith(history []chat.Message, state json.RawMessage) []chat.Message {
	if r.Type != ReducerSummarize {
		return r.Reduce(history)
	}
	st := ParseSummaryState(state)
	start := summaryStart(history, st)
	var out []chat.Message
	for _, m := range history[:start] {
		if m.Role == chat.RoleSystem {
			out = append(out, m)
		}
	}
	if st.Summary != "" {
		out = append(out, chat.TextMessage(st.SummarizedThrough+"/summary", chat.RoleSystem, "", SummaryPrefix+st.Summary))
	}
	return append(out, history[start:]...)
}

// summaryStart is the index of the first message after the summary.
func summaryStart(history []chat.Message, st SummaryState) int {
	if st.SummarizedThrough == "" {
		return 0
	}
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].MessageID == st.SummarizedThrough {
			return i + 1
		}
	}
	return 0
}

// ToSummarize returns the range [from, to) of history that the next summary should
// cover, and whether one is due: more than MaxMessages unsummarized messages. The cut
// keeps the latest Keep messages and never falls between a call and its result.
func (r Reducer) ToSummarize(history []chat.Message, state json.RawMessage) (from, to int, due bool) {
	if r.Type != ReducerSummarize {
		return 0, 0, false
	}
	from = summaryStart(history, ParseSummaryState(state))
	if len(history)-from <= r.MaxMessages {
		return 0, 0, false
	}
	keep := r.Keep
	if keep <= 0 {
		keep = r.MaxMessages / 2
	}
	to = len(history) - keep
	for to < len(history) && history[to].Role == chat.RoleTool {
		to++ // results stay with their call: the cut moves past them
	}
	if to <= from {
		return 0, 0, false
	}
	return from, to, true
}

// Validate checks the reducer's settings.
func (r Reducer) Validate() error {
	switch r.Type {
	case "", ReducerNone:
		return nil
	case ReducerTruncate, ReducerSummarize:
		if r.MaxMessages < 2 {
			return fmt.Errorf("reducer %q needs maxMessages of at least 2", r.Type)
		}
		if r.Keep < 0 || r.Keep >= r.MaxMessages {
			return fmt.Errorf("reducer keep must be between 0 and maxMessages")
		}
		return nil
	}
	return fmt.Errorf("unknown reducer %q (known: %s, %s, %s)", r.Type, ReducerNone, ReducerTruncate, ReducerSummarize)
}

// Key is the reducer's part of a channel key: agents with different reducers see
// different histories, so they have different channels.
func (r Reducer) Key() string {
	if r.Type == "" || r.Type == ReducerNone {
		return ReducerNone
	}
	if r.Type == ReducerSummarize {
		return fmt.Sprintf("%s:%d:%d", r.Type, r.MaxMessages, r.Keep)
	}
	return fmt.Sprintf("%s:%d", r.Type, r.MaxMessages)
}

// Reduce returns the messages to send: for truncate, every system message plus the
// latest messages so that at most MaxMessages remain, except that a call is never
// split from its results (OpenAI refuses a tool message whose call it was not sent, and
// a call without its results). When the cut falls on a tool message, it moves forward
// past the tool messages to the next message; when none follows (the history ends in a
// tool round: the results the model is about to read), it moves back to the message
// with the calls, so the view may then hold more than MaxMessages. The input is not
// modified.
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
	start := callBoundary(rest, max(len(rest)-keep, 0))
	return append(system, rest[start:]...)
}

// callBoundary is the first index at or after i where msgs can start without a tool
// message cut off from its call: past the tool messages at i, or, when msgs ends in
// them, back at the message before them (the one with the calls).
func callBoundary(msgs []chat.Message, i int) int {
	j := i
	for j < len(msgs) && msgs[j].Role == chat.RoleTool {
		j++
	}
	if j < len(msgs) {
		return j
	}
	for i > 0 && msgs[i].Role == chat.RoleTool {
		i--
	}
	return i
}
