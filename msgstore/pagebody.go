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
	return EncodePageBodyFrom(b, nil)
}

// EncodePageBodyFrom is EncodePageBody given, for some messages, their canonical form
// already: raw[i], when raw is that long and raw[i] is not nil, is written as message i
// instead of encoding b.Messages[i]. The caller promises raw[i] is
// chatstate.EncodeMessage(b.Messages[i]) and that message is not a stub, as
// chatstate.DecodeKeepingBytes proves for the messages of a document it read: an
// import then copies its older messages into pages rather than encoding each again.
func EncodePageBodyFrom(b PageBody, raw [][]byte) ([]byte, error) {
	var out bytes.Buffer
	size := 128
	for i, m := range b.Messages {
		if i < len(raw) && raw[i] != nil {
			size += len(raw[i]) + 1
			continue
		}
		size += 128 + m.Size() // as EncodeMessage sizes one, so the page is copied once
	}
	out.Grow(size)
	writeHead(&out, b.ChatID, b.Lineage, b.Level, b.Seq, b.First)
	out.WriteString(messagesKey)
	for i, m := range b.Messages {
		if i < len(raw) && raw[i] != nil {
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(raw[i])
			continue
		}
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
	if b, ok := decodePageBodyFast(body); ok {
		return b, nil
	}
	return decodePageBodyJSON(body)
}

// messagesKey is what separates a page body's head from its messages, as
// EncodePageBody writes them. It cannot occur inside a JSON string (a quote there is
// escaped), so its first occurrence ends the head.
const messagesKey = `,"messages":[`

// decodePageBodyFast reads a body laid out as EncodePageBody writes it: the head, up to
// messagesKey, with encoding/json, and the messages, which end the body ("]}"), with
// chatstate's reader of canonical messages; ok is false for any other body, which
// decodePageBodyJSON then reads (and names what is wrong with). Whatever it accepts,
// decodePageBodyJSON returns the same for (pagebody_test.go): it only skips
// encoding/json's scan of the whole body and the copy of each message, which took most
// of an export's time.
func decodePageBodyFast(body []byte) (PageBody, bool) {
	at := bytes.Index(body, []byte(messagesKey))
	if at < 0 || !bytes.HasSuffix(body, []byte("]}")) {
		return PageBody{}, false
	}
	var head pageHead
	if json.Unmarshal(append(body[:at:at], '}'), &head) != nil || head.V == nil || *head.V != 1 || head.Level != 0 {
		return PageBody{}, false
	}
	msgs, err := chatstate.DecodeMessages(body[at+len(messagesKey)-1 : len(body)-1])
	if err != nil {
		return PageBody{}, false
	}
	return PageBody{ChatID: head.ChatID, Lineage: head.Lineage, Level: head.Level, Seq: head.Seq, First: head.First,
		Messages: msgs}, true
}

// decodePageBodyJSON is DecodePageBody for any body: encoding/json reads it whole, then
// each message is decoded on its own, so that an error names the message.
func decodePageBodyJSON(body []byte) (PageBody, error) {
	var raw struct {
		pageHead
		Messages []json.RawMessage `json:"messages"`
	}
	if err := decodeHead(body, &raw, &raw.pageHead, "a page"); err != nil {
		return PageBody{}, err
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

// IndexEntry is one reference an index page lists: a page of the level below, of the
// same chat and lineage (docs/chat-state-v1.md, "Message store pages"). Its JSON is the
// index entry's: {"level", "seq", "first", "count", "bytes", "digest"}, level left out
// when 0.
type IndexEntry struct {
	Level  int    `json:"level,omitempty"`
	Seq    int64  `json:"seq"`
	First  int64  `json:"first"`
	Count  int64  `json:"count"`
	Bytes  int    `json:"bytes"`
	Digest string `json:"digest"`
}

// IndexBody is the plaintext body of an index page (level ≥ 1): version 1, the chat,
// lineage, level, seq, the absolute index of the first message it covers, and the
// references of the level-1 pages under it, in order.
type IndexBody struct {
	ChatID  string
	Lineage string
	Level   int
	Seq     int64
	First   int64
	Refs    []IndexEntry
}

// EncodeIndexBody returns b's plaintext body, as EncodePageBody does a level-0 page's:
// the same members in the same order, "refs" in place of "messages"; deterministic.
func EncodeIndexBody(b IndexBody) ([]byte, error) {
	if b.Level < 1 || len(b.Refs) == 0 {
		return nil, fmt.Errorf("index page %d: level %d with %d references: an index page is level 1 or more and lists at least one page", b.Seq, b.Level, len(b.Refs))
	}
	var out bytes.Buffer
	writeHead(&out, b.ChatID, b.Lineage, b.Level, b.Seq, b.First)
	out.WriteString(`,"refs":`)
	refs, err := json.Marshal(b.Refs)
	if err != nil {
		return nil, fmt.Errorf("index page %d: %w", b.Seq, err)
	}
	out.Write(refs)
	out.WriteByte('}')
	return out.Bytes(), nil
}

// DecodeIndexBody parses an index page's plaintext body. A body that is not JSON of
// that shape, of another version, of level 0, without references, or whose
// references are not consecutive pages of the level below covering the messages from
// its first on, is ErrPageMismatch naming what is wrong.
func DecodeIndexBody(body []byte) (IndexBody, error) {
	var raw struct {
		pageHead
		Refs []IndexEntry `json:"refs"`
	}
	if err := decodeHead(body, &raw, &raw.pageHead, "an index page"); err != nil {
		return IndexBody{}, err
	}
	if raw.Level < 1 || len(raw.Refs) == 0 {
		return IndexBody{}, fmt.Errorf("%w: a level %d page with %d references where an index page was expected", ErrPageMismatch, raw.Level, len(raw.Refs))
	}
	next := raw.First
	for i, r := range raw.Refs {
		if r.Level != raw.Level-1 || r.First != next || r.Count < 1 {
			return IndexBody{}, fmt.Errorf("%w: reference %d is level %d, messages %d to %d: the references of a level %d page are consecutive level %d pages from message %d",
				ErrPageMismatch, i, r.Level, r.First, r.First+r.Count-1, raw.Level, raw.Level-1, next)
		}
		next += r.Count
	}
	return IndexBody{ChatID: raw.ChatID, Lineage: raw.Lineage, Level: raw.Level, Seq: raw.Seq, First: raw.First, Refs: raw.Refs}, nil
}

// Count is the number of messages b's references cover.
func (b IndexBody) Count() int64 {
	var n int64
	for _, r := range b.Refs {
		n += r.Count
	}
	return n
}

// pageHead is the members every page body begins with (docs/chat-state-v1.md,
// "Message store pages").
type pageHead struct {
	V       *int   `json:"v"`
	ChatID  string `json:"chatId"`
	Lineage string `json:"lineage"`
	Level   int    `json:"level"`
	Seq     int64  `json:"seq"`
	First   int64  `json:"first"`
}

// writeHead writes a page body's opening brace and head members, in the documented
// order: {"v":1,"chatId":…,"lineage":…,"level":…,"seq":…,"first":…
func writeHead(out *bytes.Buffer, chatID, lineage string, level int, seq, first int64) {
	chat, _ := json.Marshal(chatID)
	lin, _ := json.Marshal(lineage)
	out.WriteString(`{"v":1,"chatId":`)
	out.Write(chat)
	out.WriteString(`,"lineage":`)
	out.Write(lin)
	out.WriteString(`,"level":` + strconv.Itoa(level) + `,"seq":` + strconv.FormatInt(seq, 10) + `,"first":` + strconv.FormatInt(first, 10))
}

// decodeHead unmarshals body into raw, whose head is head, and checks its version: a
// body that is not JSON, or of a version other than 1, is ErrPageMismatch saying so
// (what names the kind of page expected).
func decodeHead(body []byte, raw any, head *pageHead, what string) error {
	if err := json.Unmarshal(body, raw); err != nil {
		return fmt.Errorf("%w: the body is not %s: %v", ErrPageMismatch, what, err)
	}
	if head.V == nil || *head.V != 1 {
		return fmt.Errorf("%w: page version %v, this reader knows 1", ErrPageMismatch, head.V)
	}
	return nil
}
