package wire

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentchat/agentchat/chat"
)

// TemporalPayloadLimit is the most one payload may hold (the server's default), which
// every limit below stays under: a workflow or continue-as-new input, an update's or
// signal's argument or result, an activity's input or result, a query's answer
// (dynamic config limit.blobSize.error, 2 MiB). Past it Temporal fails the task or
// terminates the workflow.
const TemporalPayloadLimit = 2 << 20

// agentchat's limits: the README's table. Bytes are encoded bytes (the JSON Temporal
// carries), not content bytes, unless a comment says otherwise.
const (
	// DefaultMaxMessageBytes is the largest user message a chat accepts unless its
	// input says otherwise: 256 KiB.
	DefaultMaxMessageBytes = 256 << 10
	// MaxMessageBytesLimit is the most AgentChatInput.MaxMessageBytes may be: 1 MiB, half
	// a payload, so that a message travels in an update, a signal or a model call's input
	// with room for the rest.
	MaxMessageBytesLimit = 1 << 20
	// ReplyInlineLimit is the largest model reply the workflow holds inline; a larger one
	// goes to the chat's message store and the workflow keeps a reference: 1 MiB.
	ReplyInlineLimit = 1 << 20
	// ImportInlineBytes: an imported document over this many bytes has the bodies of
	// all but its latest messages moved to the message store while it is imported.
	ImportInlineBytes = 512 << 10
	// ToolResultLimit is the largest result a tool function may return, in encoded bytes
	// (TextBytes: < > & and control characters take six): 1 MiB, as a model reply, so that a call's result travels in the CallTool
	// activity's result with room under TemporalPayloadLimit. A larger result is not
	// passed on: the call gets an error result that names this limit, which the model
	// reads, and the turn goes on.
	ToolResultLimit = 1 << 20
	// HistoryPageBytes bounds one History query answer (whatever HistoryInput asks): 1 MiB
	// of messages. A single message larger than that (at most ReplyInlineLimit or
	// MaxMessageBytesLimit) is returned alone.
	HistoryPageBytes = 1 << 20
	// ChatLengthLimit bounds the window a chat holds in its workflow: once the references
	// the workflow keeps for the messages it holds (id, role, author, agent and time: 120
	// to 150 bytes each with short ids, so 10,000 to 13,000 messages) pass 1.5 MiB, the
	// chat takes no new turn. A chat whose message store keeps pages moves its older
	// messages there at continue-as-new (PagedHistory), so its window stays far below
	// it; one whose store keeps no pages, or does not answer, can reach it. It can still
	// be read, exported, imported and migrated.
	ChatLengthLimit = 1536 << 10
	// DocumentLengthLimit is the most an imported document's window's references may
	// take (CheckDocumentSizes; all of it when the worker's store keeps no pages): 1.625
	// MiB (11,000 to 14,000 messages), ChatLengthLimit plus room for the turn that reached
	// it, so that every chat that can exist can be imported and migrated. A longer one is
	// refused.
	DocumentLengthLimit = 1664 << 10
	// QueuedTurnsLimit bounds the turns waiting in a chat (the one being answered
	// included): 1.25 MiB of messages, so that an export's snapshot and a document's
	// header, which carry them, stay under a payload. Past it a new turn is refused
	// (QueueFull, retryable) until the queue drains.
	QueuedTurnsLimit = 1280 << 10
	// ToolRunsLimit bounds the tool runs a chat keeps for its taken-back turns (ToolRun:
	// a call's id, name, arguments and result, so that a retried turn reuses the result
	// instead of running the call again): 256 KiB encoded, CarryLimit less
	// DocumentLengthLimit, so that a continue-as-new input carries them beside a full
	// chat's references. Past it (or past 64 runs) the oldest runs are dropped, and a run
	// larger than it is not kept: such a call runs again if its turn is sent again.
	ToolRunsLimit = 256 << 10
	// SummaryLimit bounds a summarizing reducer's summary (SummarizeResult.Summary): 16
	// KiB encoded (TextBytes), about 4,000 tokens. The summary is channel state, which
	// every continue-as-new input and every document carries whole, beside a full chat's
	// references; a longer one is cut to the limit at a character boundary, ending in
	// SummaryCutMark.
	SummaryLimit = 16 << 10
	// CarryLimit is the most a continue-as-new input may encode to: 1.875 MiB, 128 KiB
	// under TemporalPayloadLimit. Message bodies move to the message store until the
	// carried state fits: what stays is at most DocumentLengthLimit of references, the
	// latest bodies within carryTailBytes, the tool runs (ToolRunsLimit), and the chat's
	// other state.
	CarryLimit = 1920 << 10
)

// MessageBytes returns m's encoded size: the length of json.Marshal(m), as Temporal
// carries it. It is computed without encoding (workflow code measures messages often,
// and must not stall its task), except for contents of unknown types.
func MessageBytes(m chat.Message) int {
	n := stubShape + jsonStringBytes(m.MessageID) + jsonStringBytes(string(m.Role)) + optionalBytes(m)
	if m.Contents == nil {
		return n
	}
	n += len(`[]`) - len(`null`) + max(len(m.Contents)-1, 0) // brackets and commas
	for _, c := range m.Contents {
		n += ContentBytes(c)
	}
	return n
}

// stubShape is the JSON of a message without its variable parts.
const stubShape = len(`{"messageId":"","role":"","contents":null}`)

// optionalBytes is the JSON of m's optional fields (author, agent, time, usage).
func optionalBytes(m chat.Message) int {
	n := 0
	if m.AuthorName != "" {
		n += len(`,"authorName":""`) + jsonStringBytes(m.AuthorName)
	}
	if m.AgentID != "" {
		n += len(`,"agentId":""`) + jsonStringBytes(m.AgentID)
	}
	if !m.CreatedAt.IsZero() {
		var buf [64]byte // RFC 3339 with nanoseconds takes at most 35 bytes (years past 9999 more): no allocation
		n += len(`,"createdAt":""`) + len(m.CreatedAt.AppendFormat(buf[:0], time.RFC3339Nano))
	}
	if u := m.Usage; u != nil {
		n += len(`,"usage":{"inputTokens":,"outputTokens":}`) + intBytes(u.InputTokens) + intBytes(u.OutputTokens)
		if u.Model != "" {
			n += len(`,"model":""`) + jsonStringBytes(u.Model)
		}
		if u.CachedTokens != 0 {
			n += len(`,"cachedTokens":`) + intBytes(u.CachedTokens)
		}
	}
	return n
}

// intBytes is the length of v in decimal, its sign included.
func intBytes(v int) int {
	var buf [20]byte
	return len(strconv.AppendInt(buf[:0], int64(v), 10))
}

// ContentBytes is the length of c's JSON as chat.Content.MarshalJSON writes it.
func ContentBytes(c chat.Content) int {
	field := func(name, v string) int { return len(`,"":""`) + len(name) + jsonStringBytes(v) }
	opt := func(name, v string) int {
		if v == "" {
			return 0
		}
		return field(name, v)
	}
	n := len(`{"type":""}`) + jsonStringBytes(c.Type)
	switch c.Type {
	case chat.ContentText:
		return n + field("text", c.Text)
	case chat.ContentImage:
		return n + opt("uri", c.URI) + opt("data", c.Data) + opt("mediaType", c.MediaType)
	case chat.ContentFunctionCall:
		return n + opt("callId", c.CallID) + opt("name", c.Name) + field("arguments", c.Arguments)
	case chat.ContentFunctionResult:
		return n + opt("callId", c.CallID) + field("result", c.Result) + opt("error", c.Error)
	}
	b, err := json.Marshal(c) // kept byte-for-byte, then compacted and escaped by encoding/json
	if err != nil {
		return len(c.Raw)
	}
	return len(b)
}

// StubBytes returns the encoded size of m's reference: m without its contents.
func StubBytes(m chat.Message) int {
	m.Contents = nil
	return MessageBytes(m)
}

// HistoryStubBytes sums StubBytes over msgs: what the workflow keeps of them at the least.
func HistoryStubBytes(msgs []chat.Message) int {
	n := 0
	for _, m := range msgs {
		n += StubBytes(m)
	}
	return n
}

// CheckDocumentSizes refuses a document whose history's references from
// ImportBoundary(history, window) on (what the chat holds in its window; the older
// messages go to pages) would pass DocumentLengthLimit, or whose pending turns pass
// QueuedTurnsLimit: a chat could not hold it. window ≤ 0 checks the whole history (an
// import without pages).
func CheckDocumentSizes(history, pending []chat.Message, window int) error {
	if window > 0 {
		history = history[ImportBoundary(history, window):]
	}
	if n := HistoryStubBytes(history); n > DocumentLengthLimit {
		return fmt.Errorf("the document's %d messages take %d bytes as references; a chat holds at most %d (DocumentLengthLimit)",
			len(history), n, DocumentLengthLimit)
	}
	n := 0
	for _, m := range pending {
		n += MessageBytes(m)
	}
	if n > QueuedTurnsLimit {
		return fmt.Errorf("the document's %d pending turns take %d bytes; a chat queues at most %d (QueuedTurnsLimit)",
			len(pending), n, QueuedTurnsLimit)
	}
	return nil
}

// TextBytes is the length of s as encoding/json writes it in a JSON string (as Temporal
// carries it), without the quotes. Limits on text count these bytes.
func TextBytes(s string) int { return jsonStringBytes(s) }

// jsonStringBytes is the length of s as encoding/json writes it in a string, without the
// quotes: \" \\ \b \f \n \r \t take two bytes; other control characters, < > & (HTML
// escaping), U+2028, U+2029 and each byte of invalid UTF-8 (\ufffd) take six.
func jsonStringBytes(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			n += int(jsonASCIIBytes[b])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == 0x2028, r == 0x2029:
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// jsonASCIIBytes[b] is the length of ASCII byte b as encoding/json writes it in a
// string (jsonStringBytes).
var jsonASCIIBytes = func() (t [utf8.RuneSelf]uint8) {
	for b := range t {
		switch {
		case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
			t[b] = 2
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			t[b] = 6
		default:
			t[b] = 1
		}
	}
	return t
}()

// EncodedBytes returns the size of v's JSON.
func EncodedBytes(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// Bytes returns the encoded size of the user message in carries, as maxMessageBytes
// counts it.
func (in SendMessageInput) Bytes() int {
	m := chat.Message{MessageID: in.MessageID, Role: chat.RoleUser, AuthorName: in.AuthorName, Contents: in.Contents}
	if in.Text != "" {
		m.Contents = append(m.Contents, chat.Text(in.Text))
	}
	return MessageBytes(m)
}

// SummaryCutMark ends a summary cut to SummaryLimit, so that the model (and a person
// reading the document) sees that it was.
const SummaryCutMark = " [summary cut at SummaryLimit]"
