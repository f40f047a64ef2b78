package offline

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode"

	openai "github.com/sashabaranov/go-openai"
)

// argFragmentRunes is the size of the argument fragments a streamed tool call is cut
// into, in runes (cuts never split a UTF-8 sequence).
const argFragmentRunes = 8

// chunk is one "chat.completion.chunk" event, shaped as OpenAI streams it: finish_reason
// is null until the last choice chunk, and with stream_options.include_usage every chunk
// carries "usage": null except the final usage chunk. go-openai decodes it into
// openai.ChatCompletionStreamResponse.
type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             any           `json:"usage,omitempty"` // nil (absent), json null, or *openai.Usage
}

// chunkChoice is the one choice of a chunk.
type chunkChoice struct {
	Index        int                  `json:"index"`
	Delta        chunkDelta           `json:"delta"`
	FinishReason *openai.FinishReason `json:"finish_reason"`
}

// chunkDelta is the part of the message a chunk adds.
type chunkDelta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []chunkToolCall `json:"tool_calls,omitempty"`
}

// chunkToolCall is a piece of one tool call: the first piece has id, type and name, the
// following ones only argument fragments; Index says which call they belong to.
type chunkToolCall struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function chunkFunction `json:"function"`
}

// chunkFunction is the function part of a chunkToolCall.
type chunkFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// jsonNull is "usage": null on the chunks of a stream that includes usage.
var jsonNull = json.RawMessage("null")

// stream answers ans as Server-Sent Events: a role chunk, the content in word chunks,
// each tool call (header, then argument fragments), a chunk with the finish reason, a
// usage chunk if includeUsage, then "data: [DONE]". With a delay (chunkDelay), each
// event is flushed and the next one waits delay; without, the events are written back to
// back and flushed once, as a model that has its whole answer at once would send them.
// It stops quietly when the request is cancelled or a write fails (the client is gone).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, ans answer, includeUsage bool, delay time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	paced := delay > 0

	events := streamChunks(ans, includeUsage)
	var (
		buf  []byte
		text textChunks
	)
	for i, c := range events {
		if i > 0 && paced && !sleep(r.Context(), delay) {
			s.log.Debug("offline: stream cancelled", "id", ans.id, "sent", i)
			return
		}
		data, err := text.encode(c)
		if err != nil { // only our own types are encoded here
			s.log.Error("offline: encode chunk", "error", err)
			return
		}
		buf = appendEvent(buf[:0], data)
		if !writeEvent(w, rc, buf, paced) {
			return
		}
	}
	if sleep(r.Context(), delay) {
		writeEvent(w, rc, appendEvent(buf[:0], []byte("[DONE]")), true)
	}
}

// textChunks encodes a stream's chunks as json.Marshal does, the text chunks (one
// choice whose delta is only content) from a template: the chunk's JSON with the
// content cut out, made from the stream's first text chunk. A reply is a chunk a word,
// and encoding each whole took about half of the offline model's time on a turn.
type textChunks struct {
	head, tail []byte // the JSON before and after the content string; head nil until made
	of         chunkHead
	whole      bool // the template cannot be made: encode every chunk whole
}

// chunkHead is what a text chunk's JSON holds besides its content.
type chunkHead struct {
	id, object, model, fingerprint string
	created                        int64
	usage                          string // "" (absent) or "null"; anything else is not templated
}

// headOf returns c's chunkHead, and false when its usage is neither absent nor null.
func headOf(c chunk) (chunkHead, bool) {
	h := chunkHead{id: c.ID, object: c.Object, model: c.Model, fingerprint: c.SystemFingerprint, created: c.Created}
	switch u := c.Usage.(type) {
	case nil:
	case json.RawMessage:
		if string(u) != "null" {
			return h, false
		}
		h.usage = "null"
	default:
		return h, false
	}
	return h, true
}

// textSentinel stands for the content when the template is made: encoding/json writes
// it as the escape below. When an id or model holds it too, the stream's chunks are
// encoded whole.
const (
	textSentinel        = "\x00"
	textSentinelEncoded = `"\u0000"`
)

// encode returns c's JSON, the same bytes as json.Marshal(c).
func (t *textChunks) encode(c chunk) ([]byte, error) {
	if len(c.Choices) != 1 {
		return json.Marshal(c)
	}
	ch := c.Choices[0]
	if d := ch.Delta; d.Content == nil || d.Role != "" || d.ToolCalls != nil || ch.FinishReason != nil || ch.Index != 0 {
		return json.Marshal(c)
	}
	h, ok := headOf(c)
	if !ok || t.whole || (t.head != nil && h != t.of) {
		return json.Marshal(c)
	}
	if t.head == nil {
		t.of = h
		sentinel := textSentinel
		c.Choices = []chunkChoice{{Delta: chunkDelta{Content: &sentinel}}}
		tmpl, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		c.Choices = []chunkChoice{ch}
		if strings.Count(string(tmpl), textSentinelEncoded) != 1 { // an id or model holds it too
			t.whole = true
			return json.Marshal(c)
		}
		at := strings.Index(string(tmpl), textSentinelEncoded)
		t.head, t.tail = tmpl[:at:at], tmpl[at+len(textSentinelEncoded):]
	}
	content, err := json.Marshal(*ch.Delta.Content)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(t.head)+len(content)+len(t.tail))
	return append(append(append(out, t.head...), content...), t.tail...), nil
}

// appendEvent appends the Server-Sent Event "data: <data>\n\n" to buf.
func appendEvent(buf, data []byte) []byte {
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

// writeEvent writes one encoded event, flushing it when flush is set; it reports whether
// that worked.
func writeEvent(w http.ResponseWriter, rc *http.ResponseController, event []byte, flush bool) bool {
	if _, err := w.Write(event); err != nil {
		return false
	}
	return !flush || rc.Flush() == nil
}

// streamChunks is every chunk of the stream for ans, in order.
func streamChunks(ans answer, includeUsage bool) []chunk {
	var usageField any
	if includeUsage {
		usageField = jsonNull
	}
	mk := func(delta chunkDelta, finish *openai.FinishReason) chunk {
		return chunk{
			ID: ans.id, Object: "chat.completion.chunk", Created: ans.created, Model: ans.model,
			Choices: []chunkChoice{{Delta: delta, FinishReason: finish}},
			Usage:   usageField,
		}
	}

	empty := ""
	chunks := []chunk{mk(chunkDelta{Role: openai.ChatMessageRoleAssistant, Content: &empty}, nil)}
	for _, word := range splitWords(ans.content) {
		chunks = append(chunks, mk(chunkDelta{Content: &word}, nil))
	}
	for i, call := range ans.toolCalls {
		head := chunkToolCall{Index: i, ID: call.ID, Type: string(call.Type),
			Function: chunkFunction{Name: call.Function.Name}}
		chunks = append(chunks, mk(chunkDelta{ToolCalls: []chunkToolCall{head}}, nil))
		for _, frag := range splitRunes(call.Function.Arguments, argFragmentRunes) {
			piece := chunkToolCall{Index: i, Function: chunkFunction{Arguments: frag}}
			chunks = append(chunks, mk(chunkDelta{ToolCalls: []chunkToolCall{piece}}, nil))
		}
	}
	finish := ans.finish
	chunks = append(chunks, mk(chunkDelta{}, &finish))
	if includeUsage {
		u := ans.usage
		chunks = append(chunks, chunk{
			ID: ans.id, Object: "chat.completion.chunk", Created: ans.created, Model: ans.model,
			Choices: []chunkChoice{}, Usage: &u,
		})
	}
	return chunks
}

// splitWords cuts s into pieces that each hold one word with the whitespace before it,
// as OpenAI's tokens carry their leading space (the first piece also keeps any leading
// whitespace, the last any trailing), so that the pieces joined are exactly s. Words are
// separated as by strings.Fields. It returns nil for "".
func splitWords(s string) []string {
	var pieces []string
	start, prevSpace := 0, true
	for i, r := range s {
		space := unicode.IsSpace(r)
		if space && !prevSpace { // a word just ended
			pieces = append(pieces, s[start:i])
			start = i
		}
		prevSpace = space
	}
	rest := s[start:]
	switch {
	case rest == "":
	case len(pieces) > 0 && strings.TrimFunc(rest, unicode.IsSpace) == "":
		pieces[len(pieces)-1] += rest
	default:
		pieces = append(pieces, rest)
	}
	return pieces
}

// splitRunes cuts s into pieces of at most n runes; nil for "".
func splitRunes(s string, n int) []string {
	var pieces []string
	count, start := 0, 0
	for i := range s {
		if count == n {
			pieces = append(pieces, s[start:i])
			start, count = i, 0
		}
		count++
	}
	if start < len(s) {
		pieces = append(pieces, s[start:])
	}
	return pieces
}
