package chatstate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/agentchat/agentchat/chat"
)

// digestPrefix starts every digest.
const digestPrefix = "sha256:"

// Encode returns the canonical (RFC 8785 JCS) bytes of d with its "digest" member set to
// "sha256:" + the hex SHA-256 of the canonical bytes of d without that member, and the
// digest. d.Digest is ignored. Nil slices encode as [] (history, participants, channels
// and pendingTurns are always present); empty states encode as {}; a state or an unknown
// content is written in its canonical form.
//
// Encode refuses, with a *FieldError, a document that Decode would refuse: one that
// breaks a rule of chat-state-v1.md (see Validate) or the tool-call pairing rule in a
// way that cannot be repaired (a functionResult without its call, a callId used twice).
// A functionCall without its result is written as it is: Decode repairs it.
func Encode(d Document) (canonical []byte, digest string, err error) {
	if err := d.Validate(); err != nil {
		return nil, "", err
	}
	if _, _, err := repairCalls(d); err != nil {
		return nil, "", err
	}
	return encode(d)
}

// Digest returns the digest of d as Encode computes it, ignoring d.Digest. It refuses
// what Encode refuses.
func Digest(d Document) (string, error) {
	_, digest, err := Encode(d)
	return digest, err
}

// digestMemberLen is the length of `"digest":"sha256:<64 hex>",`.
const digestMemberLen = len(`"digest":"`+digestPrefix+`",`) + 64

// encode writes d canonically, without checking the rules of Validate.
func encode(d Document) ([]byte, string, error) {
	e := encoder{b: make([]byte, 0, estimateSize(d))}
	if err := e.document(d); err != nil {
		return nil, "", err
	}
	// The digest member, which sorts between "chatId" and "exportedAt", has room
	// reserved at digestAt: hash around it, then fill it in.
	h := sha256.New()
	h.Write(e.b[:e.digestAt])
	h.Write(e.b[e.digestAt+digestMemberLen:])
	var sum [sha256.Size]byte
	digest := digestPrefix + hex.EncodeToString(h.Sum(sum[:0]))
	copy(e.b[e.digestAt:], `"digest":"`+digest+`",`)
	return e.b, digest, nil
}

func estimateSize(d Document) int {
	n := 1024
	for _, m := range d.History {
		n += 192 + m.Size()
	}
	for _, m := range d.PendingTurns {
		n += 192 + m.Size()
	}
	return n
}

// encoder appends the canonical form of a document to b. Members are written in the
// order RFC 8785 sorts them (UTF-16 code units; all names here are ASCII, so byte
// order), which the tests check against jcs.Transform.
type encoder struct {
	b        []byte
	digestAt int // offset of the room left for the "digest" member
}

func (e *encoder) key(name string) { e.b = append(append(append(e.b, '"'), name...), '"', ':') }

func (e *encoder) str(name, v string) {
	e.key(name)
	e.b = appendString(e.b, v)
}

// time writes t as encoding/json does: RFC 3339 with nanoseconds, ASCII (no escapes).
// field is called only on error.
func (e *encoder) time(field func() string, t time.Time) error {
	var err error
	e.b = append(e.b, '"')
	if e.b, err = t.AppendText(e.b); err != nil {
		return fieldErr(field(), "cannot be written as RFC 3339: "+err.Error())
	}
	e.b = append(e.b, '"')
	return nil
}

func (e *encoder) object(field string, raw json.RawMessage) error {
	c, err := canonicalObject(raw)
	if err != nil {
		return fieldErr(field, err.Error())
	}
	e.b = append(e.b, c...)
	return nil
}

func (e *encoder) document(d Document) error {
	if err := e.head(d); err != nil {
		return err
	}
	if err := e.items("history", d.History); err != nil {
		return err
	}
	return e.tail(d)
}

// head writes the members before the history's messages: {"channels":[…],"chatId":…,
// room for the digest member at digestAt, "exportedAt":…,"history":[
func (e *encoder) head(d Document) error {
	e.b = append(e.b, '{')
	e.key("channels")
	e.b = append(e.b, '[')
	for i, c := range d.Channels {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		if err := e.channel(index("channels", i), c); err != nil {
			return err
		}
	}
	e.b = append(e.b, "],"...)
	e.str("chatId", d.ChatID)
	e.b = append(e.b, ',')
	e.digestAt = len(e.b)
	e.b = append(e.b, make([]byte, digestMemberLen)...)
	e.key("exportedAt")
	if err := e.time(func() string { return "exportedAt" }, d.ExportedAt); err != nil {
		return err
	}
	e.b = append(e.b, ',')
	e.key("history")
	e.b = append(e.b, '[')
	return nil
}

// tail writes the members after the history's messages: ],"participants":…}
func (e *encoder) tail(d Document) error {
	e.b = append(e.b, "],"...)
	e.key("participants")
	e.b = append(e.b, '[')
	for i, p := range d.Participants {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, '{')
		e.str("id", p.ID)
		e.b = append(e.b, ',')
		e.str("name", p.Name)
		e.b = append(e.b, ',')
		e.str("type", p.Type)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, "],"...)
	if err := e.messages("pendingTurns", d.PendingTurns); err != nil {
		return err
	}
	e.b = append(e.b, ',')
	e.key("schemaVersion")
	e.b = strconv.AppendInt(e.b, int64(d.SchemaVersion), 10)
	e.b = append(e.b, ',')
	e.source(d.Source)
	e.b = append(e.b, ',')
	if err := e.strategies(d.Strategies); err != nil {
		return err
	}
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) channel(field string, c Channel) error {
	e.b = append(e.b, '{')
	e.str("channelKey", c.ChannelKey)
	e.b = append(e.b, ',')
	e.key("channelState")
	if err := e.object(member(field, "channelState"), c.ChannelState); err != nil {
		return err
	}
	e.b = append(e.b, ',')
	e.str("channelType", c.ChannelType)
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) source(s Source) {
	e.key("source")
	e.b = append(e.b, '{')
	if s.Cluster != "" {
		e.str("cluster", s.Cluster)
		e.b = append(e.b, ',')
	}
	e.str("namespace", s.Namespace)
	if s.RunID != "" {
		e.b = append(e.b, ',')
		e.str("runId", s.RunID)
	}
	e.b = append(e.b, ',')
	e.str("workflowId", s.WorkflowID)
	e.b = append(e.b, '}')
}

func (e *encoder) strategies(s Strategies) error {
	e.key("strategies")
	e.b = append(e.b, '{')
	e.key("isComplete")
	e.b = strconv.AppendBool(e.b, s.IsComplete)
	e.b = append(e.b, ',')
	if err := e.strategy("strategies.selection", "selection", s.Selection); err != nil {
		return err
	}
	e.b = append(e.b, ',')
	if err := e.strategy("strategies.termination", "termination", s.Termination); err != nil {
		return err
	}
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) strategy(field, name string, s Strategy) error {
	e.key(name)
	e.b = append(e.b, '{')
	e.key("state")
	if err := e.object(member(field, "state"), s.State); err != nil {
		return err
	}
	e.b = append(e.b, ',')
	e.str("type", s.Type)
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) messages(name string, ms []chat.Message) error {
	e.key(name)
	e.b = append(e.b, '[')
	if err := e.items(name, ms); err != nil {
		return err
	}
	e.b = append(e.b, ']')
	return nil
}

// items writes the messages of a list, comma-separated, without the brackets.
func (e *encoder) items(name string, ms []chat.Message) error {
	for i, m := range ms {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		if err := e.message(name, i, m); err != nil {
			return err
		}
	}
	return nil
}

// message writes list[i], m: agentId?, authorName?, contents, createdAt?, incomplete?,
// messageId, role, usage?.
func (e *encoder) message(list string, i int, m chat.Message) error {
	e.b = append(e.b, '{')
	if m.AgentID != "" {
		e.str("agentId", m.AgentID)
		e.b = append(e.b, ',')
	}
	if m.AuthorName != "" {
		e.str("authorName", m.AuthorName)
		e.b = append(e.b, ',')
	}
	e.key("contents")
	e.b = append(e.b, '[')
	for j, c := range m.Contents {
		if j > 0 {
			e.b = append(e.b, ',')
		}
		if err := e.content(list, i, j, c); err != nil {
			return err
		}
	}
	e.b = append(e.b, "],"...)
	if !m.CreatedAt.IsZero() {
		e.key("createdAt")
		if err := e.time(func() string { return member(index(list, i), "createdAt") }, m.CreatedAt); err != nil {
			return err
		}
		e.b = append(e.b, ',')
	}
	if m.Incomplete {
		e.b = append(e.b, `"incomplete":true,`...)
	}
	e.str("messageId", m.MessageID)
	e.b = append(e.b, ',')
	e.str("role", string(m.Role))
	if m.Usage != nil {
		e.b = append(e.b, ',')
		e.usage(*m.Usage)
	}
	e.b = append(e.b, '}')
	return nil
}

// usage writes "usage":{cachedTokens?, inputTokens, model?, outputTokens}.
func (e *encoder) usage(u chat.Usage) {
	e.key("usage")
	e.b = append(e.b, '{')
	if u.CachedTokens != 0 {
		e.int("cachedTokens", u.CachedTokens)
		e.b = append(e.b, ',')
	}
	e.int("inputTokens", u.InputTokens)
	e.b = append(e.b, ',')
	e.optional("model", u.Model)
	e.int("outputTokens", u.OutputTokens)
	e.b = append(e.b, '}')
}

// int writes an integer member (RFC 8785 writes integers as encoding/json does).
func (e *encoder) int(name string, v int) {
	e.key(name)
	e.b = strconv.AppendInt(e.b, int64(v), 10)
}

// content writes list[i].contents[j], c: the members chat.Content.MarshalJSON writes for
// c's type, sorted; an unknown type is written from Raw in its canonical form.
func (e *encoder) content(list string, i, j int, c chat.Content) error {
	e.b = append(e.b, '{')
	switch c.Type {
	case chat.ContentText:
		e.str("text", c.Text)
	case chat.ContentImage:
		e.optional("data", c.Data)
		e.optional("mediaType", c.MediaType)
		e.str("type", c.Type)
		if c.URI != "" {
			e.b = append(e.b, ',')
			e.str("uri", c.URI)
		}
		e.b = append(e.b, '}')
		return nil
	case chat.ContentFunctionCall:
		e.str("arguments", c.Arguments)
		e.b = append(e.b, ',')
		e.str("callId", c.CallID)
		e.b = append(e.b, ',')
		e.str("name", c.Name)
	case chat.ContentFunctionResult:
		e.str("callId", c.CallID)
		e.b = append(e.b, ',')
		e.optional("error", c.Error)
		e.str("result", c.Result)
	default:
		return e.unknownContent(contentPath(list, i, j), c)
	}
	e.b = append(e.b, ',')
	e.str("type", c.Type)
	e.b = append(e.b, '}')
	return nil
}

// optional writes a member and a comma when v is not empty.
func (e *encoder) optional(name, v string) {
	if v != "" {
		e.str(name, v)
		e.b = append(e.b, ',')
	}
}

func (e *encoder) unknownContent(field string, c chat.Content) error {
	e.b = e.b[:len(e.b)-1] // the '{' written by content
	if len(c.Raw) == 0 {
		return fieldErr(field, "content of type "+strconv.Quote(c.Type)+" has no raw JSON to write")
	}
	canon, err := canonicalObject(c.Raw)
	if err != nil {
		return fieldErr(field, err.Error())
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(canon, &head); err != nil || head.Type == nil || *head.Type != c.Type {
		return fieldErr(member(field, "type"), "raw JSON of a content of type "+strconv.Quote(c.Type)+" has another type")
	}
	e.b = append(e.b, canon...)
	return nil
}
