package wire

import (
	"hash/fnv"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/strategies"
)

// Carried is everything one run hands the next at continue-as-new. The workflow holds
// it as part of its state (chatState embeds it), so the next run gets it by assignment.
type Carried struct {
	// Participants are the resolved participants, in speaking order.
	Participants []Participant `json:"participants"`
	// History is the primary history, or, once the chat writes pages, the window of its
	// latest messages from Paged.Base on; a message whose body moved to the message
	// store is a stub (Contents nil).
	History []chat.Message `json:"history"`
	// Paged is the index of the older messages' pages (nil: there are none).
	Paged *PagedHistory `json:"paged,omitempty"`
	// Channels are the channels' states at the hand-over (set by carry only).
	Channels    []chatstate.Channel         `json:"channels"`
	Selection   strategies.SelectionState   `json:"selection"`
	Termination strategies.TerminationState `json:"termination"`
	// IsComplete: the termination strategy completed the chat.
	IsComplete bool `json:"isComplete,omitempty"`
	// TurnCount counts the answered turns.
	TurnCount int `json:"turnCount"`
	// Attempted counts the turns run, answered or failed: a temporary thread closes
	// after one.
	Attempted int `json:"attempted"`
	// Pending are the queued turns' messages, in order (set by carry only).
	Pending []chat.Message `json:"pending,omitempty"`
	// LastError is the most recent failed turn, refused signal or abandoned migration,
	// until a turn begun after it is answered (StateResult.LastError).
	LastError *TurnError      `json:"lastError,omitempty"`
	Restored  *CarriedRestore `json:"restored,omitempty"`
	// Store names where stubbed message bodies are ("" = none yet).
	Store string `json:"store,omitempty"`
	// Runs is how many times the chat has continued as new.
	Runs int `json:"runs"`
	// Decisions are the approval decisions given so far, by callId.
	Decisions map[string]Decision `json:"decisions,omitempty"`
	// ToolRuns are the tool calls that ran in turns taken back since (toolruns.go).
	ToolRuns []ToolRun `json:"toolRuns,omitempty"`
	// CallIDs are the call ids of the stubbed messages (a fixed-size filter).
	CallIDs CallIDFilter `json:"callIds,omitempty"`
	// Usage are the usage totals per agent, in the order the agents first reported
	// usage: one entry per agent that ever replied, so bounded by the agents a chat
	// names.
	Usage []UsageTotal `json:"usage,omitempty"`
	// RetiredIDs are message ids the chat gave up because the message store keeps a
	// body under them that no message of the chat has: replies taken back from the
	// history (their turn failed) whose bodies were stored, and reply ids the store
	// refused (StoreConflict). No other message of the chat may take them. At most 256,
	// the oldest dropped first.
	RetiredIDs []string `json:"retiredIds,omitempty"`
	// Stream is the chat's event log without the text deltas of finished messages (set
	// by the carry; a run taken over without it starts an empty log).
	Stream *StreamCarry `json:"stream,omitempty"`
}

// CarriedRestore records the document a chat was restored from; the chat keeps it
// across runs.
type CarriedRestore struct {
	Digest  string           `json:"digest"`
	Source  chatstate.Source `json:"source"`
	Repairs []string         `json:"repairs,omitempty"`
}

// ToolRun is a tool call that ran, with its result, kept while the result is not in
// the history (its turn failed and was taken back): when the turn is sent again and the
// model asks for the same call (same callId, name and arguments), the result is reused,
// never run again. A call id is therefore run at most once, whatever is retried or
// rolled back. It is carried across continue-as-new.
type ToolRun struct {
	CallID    string       `json:"callId"`
	Name      string       `json:"name"`
	Arguments string       `json:"arguments"`
	Result    chat.Content `json:"result"`
}

// Same reports whether c is the call this run ran: the same id, name and arguments.
func (r ToolRun) Same(c chat.Content) bool {
	return r.CallID == c.CallID && r.Name == c.Name && r.Arguments == c.Arguments
}

// CallIDFilter remembers the call ids of messages whose bodies left the workflow (moved
// to the message store at continue-as-new, or by an import), so that a provider that
// reuses one gets a new id (uniqueCallIDs) and no two calls share an idempotency key.
//
// It is a Bloom filter of CallIDFilterBytes bytes whatever the chat's length, so that the
// carried state stays under its payload limit: it never misses an id it was given; it
// may take an id it was not given for used (about 1 in 3,000 once it holds 7,000 ids,
// about one call per reply at ChatLengthLimit), which only renames that call
// ("<replyId>#<n>"). JSON: base64.
type CallIDFilter []byte

// CallIDFilterBytes is the size of a CallIDFilter: 16 KiB (about 22 KB in a carry).
const CallIDFilterBytes = 16 << 10

// callIDHashes is the number of bits an id sets.
const callIDHashes = 7

// bits returns the filter's bit positions for id (double hashing of FNV-1a and FNV-1).
func (CallIDFilter) bits(id string) [callIDHashes]uint64 {
	a, b := fnv.New64a(), fnv.New64()
	_, _ = a.Write([]byte(id))
	_, _ = b.Write([]byte(id))
	h1, h2 := a.Sum64(), b.Sum64()|1
	var out [callIDHashes]uint64
	for i := range out {
		out[i] = (h1 + uint64(i)*h2) % (CallIDFilterBytes * 8)
	}
	return out
}

// Add returns the filter with id added (a new filter when f is empty).
func (f CallIDFilter) Add(id string) CallIDFilter {
	if len(f) != CallIDFilterBytes {
		f = make(CallIDFilter, CallIDFilterBytes)
	}
	for _, bit := range f.bits(id) {
		f[bit/8] |= 1 << (bit % 8)
	}
	return f
}

// MayHave reports whether id may have been added; false means it never was.
func (f CallIDFilter) MayHave(id string) bool {
	if len(f) != CallIDFilterBytes {
		return false
	}
	for _, bit := range f.bits(id) {
		if f[bit/8]&(1<<(bit%8)) == 0 {
			return false
		}
	}
	return true
}

// Union returns the filter with the ids of g added.
func (f CallIDFilter) Union(g CallIDFilter) CallIDFilter {
	if len(g) != CallIDFilterBytes {
		return f
	}
	if len(f) != CallIDFilterBytes {
		return append(CallIDFilter{}, g...)
	}
	for i := range f {
		f[i] |= g[i]
	}
	return f
}

// AddCalls returns the filter with the call ids of m's functionCalls added.
func (f CallIDFilter) AddCalls(m chat.Message) CallIDFilter {
	for _, c := range m.FunctionCalls() {
		f = f.Add(c.CallID)
	}
	return f
}
