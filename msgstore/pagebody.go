package msgstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
)

// PageBody is the plaintext body of a level-0 page (docs/chat-state-v1.md, "Message
// store pages"): version 1, the chat, lineage, seq, the absolute index of its first
// message, and its messages in order (stubs for bodies kept in their own row).
type PageBody struct {
	ChatID   string
	Lineage  string
	Level    int
	Seq      int64
	First    int64
	Messages []chat.Message
}

// EncodePageBody returns b's plaintext body: UTF-8 JSON without insignificant
// whitespace, members in the documented order, each message in its canonical form
// (chatstate.EncodeMessage); a stub, whose body is in its own row, has "contents":
// null. Encoding is deterministic, so a page written again is
// the same bytes. A message that does not encode is an error naming its index.
func EncodePageBody(b PageBody) ([]byte, error) {
	var out bytes.Buffer
	size := 128
	for _, m := range b.Messages {
		size += 128 + m.Size() // as EncodeMessage sizes one, so the page is copied once
	}
	out.Grow(size)
	head := func(name string) { out.WriteByte(','); out.WriteString(strconv.Quote(name)); out.WriteByte(':') }
	out.WriteString(`{"v":1`)
	for _, kv := range []struct{ k, v string }{{"chatId", b.ChatID}, {"lineage", b.Lineage}} {
		v, _ := json.Marshal(kv.v)
		head(kv.k)
		out.Write(v)
	}
	head("level")
	out.WriteString(strconv.Itoa(b.Level))
	head("seq")
	out.WriteString(strconv.FormatInt(b.Seq, 10))
	head("first")
	out.WriteString(strconv.FormatInt(b.First, 10))
	head("messages")
	out.WriteByte('[')
	for i, m := range b.Messages {
		enc, err := chatstate.EncodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("page %d: message %d: %w", b.Seq, b.First+int64(i), err)
		}
		if m.Contents == nil { // a stub: its body is in its own row
			enc = bytes.Replace(enc, []byte(`"contents":[]`), []byte(`"contents":null`), 1)
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(enc)
	}
	out.WriteString("]}")
	return out.Bytes(), nil
}

// DecodePageBody parses a level-0 page's plaintext body. A body that is not JSON of
// that shape, of another version or level, or whose messages do not decode, is
// ErrPageMismatch naming what is wrong.
func DecodePageBody(body []byte) (PageBody, error) {
	var raw struct {
		V        *int              `json:"v"`
		ChatID   string            `json:"chatId"`
		Lineage  string            `json:"lineage"`
		Level    int               `json:"level"`
		Seq      int64             `json:"seq"`
		First    int64             `json:"first"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return PageBody{}, fmt.Errorf("%w: the body is not a page: %v", ErrPageMismatch, err)
	}
	if raw.V == nil || *raw.V != 1 {
		return PageBody{}, fmt.Errorf("%w: page version %v, this reader knows 1", ErrPageMismatch, raw.V)
	}
	if raw.Level != 0 {
		return PageBody{}, fmt.Errorf("%w: a level %d page where a level 0 page was expected", ErrPageMismatch, raw.Level)
	}
	b := PageBody{ChatID: raw.ChatID, Lineage: raw.Lineage, Level: raw.Level, Seq: raw.Seq, First: raw.First,
		Messages: make([]chat.Message, 0, len(raw.Messages))}
	for i, m := range raw.Messages {
		msg, err := chatstate.DecodeMessage(m)
		if err != nil {
			return PageBody{}, fmt.Errorf("%w: message %d: %v", ErrPageMismatch, raw.First+int64(i), err)
		}
		b.Messages = append(b.Messages, msg)
	}
	return b, nil
}
