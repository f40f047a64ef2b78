package offline

import (
	"unicode"
	"unicode/utf8"

	"github.com/agentchat/agentchat/wire"
)

// Reply is one scripted answer for one request of one agent.
//
// Exactly one kind of answer is given, checked in this order:
//   - Status != 0: an HTTP error (Text and ToolCalls are ignored);
//   - len(ToolCalls) > 0: an assistant message with these tool calls, finish_reason
//     "tool_calls" (Text, if set, is sent as its content, prefixed as below);
//   - Text != "": the text "[offline] <agent>: <Text>", finish_reason "stop"; but when
//     the request ends with tool results of which one reports an error ("error: ...",
//     as agentchat sends a rejected or failed call), the text says what failed instead
//     (answerText), since the script's text assumed the calls succeeded;
//   - none of these (the zero Reply, possibly with a Delay): the default reply, as for an
//     unscripted request (see DefaultText).
//
// In JSON, Delay is a duration string ("2s", "150ms") or a number of seconds.
type Reply struct {
	// Text is the reply text; the server prefixes it with "[offline] <agent>: ".
	Text string `json:"text,omitempty"`
	// ToolCalls answers with tool calls instead (finish_reason "tool_calls").
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Status, when non-zero, answers with this HTTP status and an OpenAI-style error body
	// {"error":{"message":...,"type":...,"param":null,"code":...}}. Use a status >= 400:
	// go-openai treats only those as errors.
	Status int `json:"status,omitempty"`
	// Message is the error message when Status is set; empty means http.StatusText(Status).
	Message string `json:"message,omitempty"`
	// RetryAfter, with Status, sets the Retry-After response header, in whole seconds;
	// zero means no header.
	RetryAfter int `json:"retryAfterSeconds,omitempty"`
	// Delay is waited before answering, on top of Options.Latency, and is cut short when
	// the request is cancelled. Non-streaming, the whole reply waits; streaming, the first
	// byte (the response headers) waits. Zero means no delay.
	Delay wire.Duration `json:"delay,omitempty"`
	// ChunkDelay, streaming, is the pause between this reply's Server-Sent Events, in
	// place of the agent's (Options.ChunkDelays) and the server's (Options.ChunkDelay);
	// zero means theirs.
	ChunkDelay wire.Duration `json:"chunkDelay,omitempty"`
}

// ToolCall is one scripted function tool call of a Reply.
type ToolCall struct {
	// ID is the tool call id; empty means "call_offline_<n>_<i>", with n the server's
	// request number and i the index of the call in the reply.
	ID string `json:"id,omitempty"`
	// Name is the function name.
	Name string `json:"name"`
	// Arguments is the function arguments as a JSON document in a string, e.g. `{"city":"Oslo"}`.
	Arguments string `json:"arguments,omitempty"`
}

// isDefault reports whether r asks for the default reply (it scripts no answer itself).
func (r Reply) isDefault() bool {
	return r.Status == 0 && len(r.ToolCalls) == 0 && r.Text == ""
}

// scriptedText is the content a scripted text reply sends for agent; "" when r has no Text.
func scriptedText(agent string, r Reply) string {
	if r.Text == "" {
		return ""
	}
	return textPrefix + agent + ": " + r.Text
}

// textPrefix starts every text the server produces, so a reader always sees it is offline.
const textPrefix = "[offline] "

// countWords approximates a token count as the number of whitespace-separated words in s.
func countWords(s string) int {
	n, inWord := 0, false
	for i := 0; i < len(s); {
		var space bool
		if c := s[i]; c < utf8.RuneSelf { // ASCII, most of a text, without decoding
			space = asciiSpace[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:]) // an invalid byte: RuneError, size 1, as range reads it
			space = unicode.IsSpace(r)
			i += size
		}
		switch {
		case space:
			inWord = false
		case !inWord:
			inWord, n = true, n+1
		}
	}
	return n
}

// asciiSpace marks the ASCII bytes unicode.IsSpace takes: '\t', '\n', '\v', '\f', '\r', ' '.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
