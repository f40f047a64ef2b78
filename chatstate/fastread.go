package chatstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/agentchat/agentchat/chat"
)

// errNotCanonical stops the fast reader at anything that is not laid out as Encode
// writes it; the caller then reads the bytes with encoding/json.
var errNotCanonical = errors.New("chatstate: not in the canonical layout")

// canonicalMessages is a message list read by readMessages: in a document's fast path
// (decodeCanonical) it replaces encoding/json for the pending turns.
type canonicalMessages []chat.Message

// UnmarshalJSON reads b with readMessages; errNotCanonical when b is not in the layout.
func (ms *canonicalMessages) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	out, err := readMessages(b)
	if err != nil {
		return err
	}
	*ms = out
	return nil
}

// readMessages reads a JSON array of messages laid out as the encoder writes them
// (members in RFC 8785 order: agentId?, authorName?, contents, createdAt?, incomplete?,
// messageId, role, usage?) and returns what encoding/json would return for the same bytes. Text,
// functionCall and functionResult contents are read here; any other content, and any
// string with an escape, by encoding/json. Anything else is errNotCanonical.
//
// It does not check that b is canonical in every respect (a number's form, say): its
// callers encode what it returns and compare that with b, so a document it misreads is
// read again by encoding/json. layout_test.go fails when it, or the encoder, misses a
// field of chat.Message or chat.Content.
func readMessages(b []byte) ([]chat.Message, error) {
	r := reader{b: b}
	ms, err := r.messages()
	if err != nil {
		return nil, err
	}
	return ms, r.end()
}

// messages consumes an array of messages; see readMessages.
func (r *reader) messages() ([]chat.Message, error) {
	if !r.lit("[") {
		return nil, errNotCanonical
	}
	out := []chat.Message{}
	if r.lit("]") {
		return out, nil
	}
	for {
		from := r.i
		m, err := r.message()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		if r.each != nil {
			r.each(m, r.b[from:r.i])
		}
		if r.lit("]") {
			return out, nil
		}
		if !r.lit(",") {
			return nil, errNotCanonical
		}
	}
}

// readHistory finds the history of a canonical document b (the fifth member, after
// channels, chatId, digest and exportedAt) and reads it. It returns the history, b
// with the history's array replaced by [] (for encoding/json to read the rest), and
// the offset of the "digest" member in both. Once it knows that offset it calls atDigest
// with it, and it calls each with every message read and the bytes it was read from
// (either may be nil).
func readHistory(b []byte, atDigest func(int), each func(m chat.Message, from []byte)) ([]chat.Message, []byte, int, error) {
	r := reader{b: b, each: each}
	if !r.lit(`{"channels":`) || r.skip() != nil {
		return nil, nil, 0, errNotCanonical
	}
	digestAt := 0
	for _, name := range []string{"chatId", "digest", "exportedAt"} {
		if name == "digest" {
			digestAt = r.i + 1 // after the comma
		}
		if !r.lit(`,"` + name + `":`) {
			return nil, nil, 0, errNotCanonical
		}
		if _, _, err := r.token(); err != nil {
			return nil, nil, 0, err
		}
	}
	if atDigest != nil {
		atDigest(digestAt)
	}
	if !r.lit(`,"history":`) {
		return nil, nil, 0, errNotCanonical
	}
	start := r.i
	history, err := r.messages()
	if err != nil {
		return nil, nil, 0, err
	}
	rest := make([]byte, 0, start+2+len(b)-r.i)
	rest = append(append(append(rest, b[:start]...), "[]"...), b[r.i:]...)
	return history, rest, digestAt, nil
}

// skip consumes one JSON value without reading it: strings are skipped whole and
// brackets matched, nothing else is checked.
func (r *reader) skip() error {
	depth := 0
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case '"':
			if _, _, err := r.token(); err != nil {
				return err
			}
			if depth == 0 {
				return nil
			}
			continue
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth <= 0 {
				r.i++
				if depth < 0 {
					return errNotCanonical
				}
				return nil
			}
		}
		r.i++
	}
	return errNotCanonical
}

// readMessage reads one message laid out as the encoder writes it; see readMessages.
func readMessage(b []byte) (chat.Message, error) {
	r := reader{b: b}
	m, err := r.message()
	if err != nil {
		return chat.Message{}, err
	}
	return m, r.end()
}

// reader reads b from i on.
type reader struct {
	b []byte
	i int
	// each, if set, is called by messages with every message read and its bytes.
	each func(m chat.Message, from []byte)
}

// lit consumes s if b continues with it.
func (r *reader) lit(s string) bool {
	if len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

func (r *reader) end() error {
	if r.i != len(r.b) {
		return errNotCanonical
	}
	return nil
}

// token consumes a JSON string and returns it with its quotes, and whether it has an
// escape. Control characters and an unterminated string are errNotCanonical.
func (r *reader) token() (tok []byte, escaped bool, err error) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false, errNotCanonical
	}
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '\\':
			escaped = true
			j++
		case c == '"':
			tok, r.i = r.b[r.i:j+1], j+1
			return tok, escaped, nil
		case c < 0x20:
			return nil, false, errNotCanonical
		}
	}
	return nil, false, errNotCanonical
}

// str consumes a JSON string and returns its value.
func (r *reader) str() (string, error) {
	tok, escaped, err := r.token()
	if err != nil {
		return "", err
	}
	body := tok[1 : len(tok)-1]
	if !utf8.Valid(body) { // encoding/json would put U+FFFD in its place
		return "", errNotCanonical
	}
	if !escaped {
		return string(body), nil
	}
	if s, ok := unescape(body); ok {
		return s, nil
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", errNotCanonical
	}
	return s, nil
}

// unescape decodes the escapes of a JSON string's body: the two-character ones and
// \u00XX, which are all RFC 8785 writes. ok is false for any other \u escape, which
// the caller leaves to encoding/json.
func unescape(body []byte) (string, bool) {
	var out strings.Builder
	out.Grow(len(body))
	for i := 0; i < len(body); i++ {
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 {
			out.Write(body[i:])
			break
		}
		out.Write(body[i : i+j])
		i += j + 1
		if i >= len(body) {
			return "", false
		}
		switch body[i] {
		case '"', '\\', '/':
			out.WriteByte(body[i])
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			if i+4 >= len(body) || body[i+1] != '0' || body[i+2] != '0' {
				return "", false
			}
			hi, lo := unhex(body[i+3]), unhex(body[i+4])
			if hi < 0 || lo < 0 || hi > 7 {
				return "", false
			}
			out.WriteRune(rune(hi<<4 | lo))
			i += 4
		default:
			return "", false
		}
	}
	return out.String(), true
}

// unhex is the value of a hex digit, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// member consumes `"name":` and the string after it.
func (r *reader) member(name string) (string, error) {
	if !r.lit(`"`) || !r.lit(name) || !r.lit(`":`) {
		return "", errNotCanonical
	}
	return r.str()
}

// optional consumes `"name":"…",` if b continues with that member.
func (r *reader) optional(name string) (string, error) {
	if !r.lit(`"` + name + `":`) {
		return "", nil
	}
	v, err := r.str()
	if err == nil && !r.lit(",") {
		err = errNotCanonical
	}
	return v, err
}

func (r *reader) message() (chat.Message, error) {
	var m chat.Message
	var err error
	if !r.lit("{") {
		return m, errNotCanonical
	}
	if m.AgentID, err = r.optional("agentId"); err != nil {
		return m, err
	}
	if m.AuthorName, err = r.optional("authorName"); err != nil {
		return m, err
	}
	if !r.lit(`"contents":[`) {
		return m, errNotCanonical
	}
	m.Contents = []chat.Content{}
	for !r.lit("]") {
		if len(m.Contents) > 0 && !r.lit(",") {
			return m, errNotCanonical
		}
		c, err := r.content()
		if err != nil {
			return m, err
		}
		m.Contents = append(m.Contents, c)
	}
	if !r.lit(",") {
		return m, errNotCanonical
	}
	if r.lit(`"createdAt":`) {
		tok, _, err := r.token()
		if err != nil || m.CreatedAt.UnmarshalJSON(tok) != nil || !r.lit(",") {
			return m, errNotCanonical
		}
	}
	m.Incomplete = r.lit(`"incomplete":true,`)
	if m.MessageID, err = r.member("messageId"); err != nil || !r.lit(",") {
		return m, errNotCanonical
	}
	role, err := r.member("role")
	if err != nil {
		return m, errNotCanonical
	}
	m.Role = chat.Role(role)
	if r.lit(`,"usage":`) {
		u, err := r.usage()
		if err != nil {
			return m, err
		}
		m.Usage = &u
	}
	if !r.lit("}") {
		return m, errNotCanonical
	}
	return m, nil
}

// usage reads {cachedTokens?, inputTokens, model?, outputTokens} as the encoder writes it.
func (r *reader) usage() (chat.Usage, error) {
	var u chat.Usage
	var err error
	if !r.lit("{") {
		return u, errNotCanonical
	}
	if r.lit(`"cachedTokens":`) {
		if u.CachedTokens, err = r.int(); err != nil || !r.lit(",") {
			return u, errNotCanonical
		}
	}
	if !r.lit(`"inputTokens":`) {
		return u, errNotCanonical
	}
	if u.InputTokens, err = r.int(); err != nil || !r.lit(",") {
		return u, errNotCanonical
	}
	if u.Model, err = r.optional("model"); err != nil || !r.lit(`"outputTokens":`) {
		return u, errNotCanonical
	}
	if u.OutputTokens, err = r.int(); err != nil || !r.lit("}") {
		return u, errNotCanonical
	}
	return u, nil
}

// int reads a non-negative integer of at most 18 digits without a leading zero; anything
// else (a sign, a fraction, an exponent) is errNotCanonical.
func (r *reader) int() (int, error) {
	start, n := r.i, 0
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' && r.i-start < 18 {
		n = n*10 + int(r.b[r.i]-'0')
		r.i++
	}
	if r.i == start || (r.b[start] == '0' && r.i-start > 1) || (r.i < len(r.b) && (r.b[r.i] >= '0' && r.b[r.i] <= '9')) {
		return 0, errNotCanonical
	}
	return n, nil
}

// content reads a text, functionCall or functionResult content laid out as the
// encoder writes it, and any other content with chat.Content's own UnmarshalJSON.
func (r *reader) content() (chat.Content, error) {
	start := r.i
	if c, ok := r.knownContent(); ok {
		return c, nil
	}
	r.i = start
	dec := json.NewDecoder(bytes.NewReader(r.b[start:]))
	var c chat.Content
	if err := dec.Decode(&c); err != nil {
		return c, errNotCanonical
	}
	r.i = start + int(dec.InputOffset())
	return c, nil
}

func (r *reader) knownContent() (chat.Content, bool) {
	var c chat.Content
	var err error
	if !r.lit("{") {
		return c, false
	}
	switch {
	case r.lit(`"text":`):
		c.Type = chat.ContentText
		if c.Text, err = r.str(); err != nil || !r.lit(`,"type":"text"}`) {
			return c, false
		}
	case r.lit(`"arguments":`):
		c.Type = chat.ContentFunctionCall
		if c.Arguments, err = r.str(); err != nil || !r.lit(",") {
			return c, false
		}
		if c.CallID, err = r.member("callId"); err != nil || !r.lit(",") {
			return c, false
		}
		if c.Name, err = r.member("name"); err != nil || !r.lit(`,"type":"functionCall"}`) {
			return c, false
		}
	case r.lit(`"callId":`):
		c.Type = chat.ContentFunctionResult
		if c.CallID, err = r.str(); err != nil || !r.lit(",") {
			return c, false
		}
		if c.Error, err = r.optional("error"); err != nil {
			return c, false
		}
		if c.Result, err = r.member("result"); err != nil || !r.lit(`,"type":"functionResult"}`) {
			return c, false
		}
	default:
		return c, false
	}
	return c, true
}
