package chatstate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentchat/agentchat/chat"
)

// Validate checks d against the rules of chat-state-v1.md and returns the first problem,
// in document order, as a *FieldError:
//
//   - schemaVersion is SchemaVersion; chatId is not empty; exportedAt is set;
//     source.namespace and source.workflowId are not empty;
//   - every message of history and pendingTurns is valid as chat.Message.Validate says
//     (the error names the field: history[i].messageId, .role, .contents[j].callId …),
//     and messageIds are unique across history and pendingTurns;
//   - each role holds the contents it may (roleProblem): a functionCall only in an
//     assistant message and with a function name, a functionResult only in a tool
//     message, no text in a tool message, an image only in a user message, and an
//     assistant message has a text or a functionCall;
//   - pendingTurns hold user messages only, without functionCall or functionResult;
//   - participant ids are not empty and unique, and their type is not empty;
//   - channelKeys are base64 (standard, padded) of 32 bytes and unique, channelTypes
//     are not empty, and channelStates are JSON objects;
//   - strategies.selection and strategies.termination have a type and a state that is
//     a JSON object.
//
// Validate does not check d.Digest nor the tool-call pairing rule (see Decode). Encode
// also refuses numbers and strings in states and unknown contents that RFC 8785 cannot
// keep exactly.
func (d Document) Validate() error {
	if err := d.validateHead(); err != nil {
		return err
	}
	ids := make(stringIDs, len(d.History)+len(d.PendingTurns))
	if err := validateMessages("history", d.History, ids); err != nil {
		return err
	}
	return d.validateAfterHistory(ids)
}

// validateHead checks the members Validate checks before the history.
func (d Document) validateHead() error {
	if d.SchemaVersion != SchemaVersion {
		return fieldErr("schemaVersion", "is "+strconv.Itoa(d.SchemaVersion)+"; this package writes version "+strconv.Itoa(SchemaVersion))
	}
	if d.ChatID == "" {
		return fieldErr("chatId", "is empty")
	}
	if d.ExportedAt.IsZero() {
		return fieldErr("exportedAt", "is not set")
	}
	if d.Source.Namespace == "" {
		return fieldErr("source.namespace", "is empty")
	}
	if d.Source.WorkflowID == "" {
		return fieldErr("source.workflowId", "is empty")
	}
	return nil
}

// validateAfterHistory checks the members Validate checks after the history, ids
// holding the history's message ids.
func (d Document) validateAfterHistory(ids idSet) error {
	if err := validateParticipants(d.Participants); err != nil {
		return err
	}
	if err := validateChannels(d.Channels); err != nil {
		return err
	}
	if err := validateStrategy("strategies.selection", d.Strategies.Selection); err != nil {
		return err
	}
	if err := validateStrategy("strategies.termination", d.Strategies.Termination); err != nil {
		return err
	}
	if err := validateMessages("pendingTurns", d.PendingTurns, ids); err != nil {
		return err
	}
	return validatePendingTurns(d.PendingTurns)
}

// msgRef is where a message is: list[i]. Paths are made only for errors.
type msgRef struct {
	list string
	i    int
}

func (r msgRef) String() string { return index(r.list, r.i) }

// idSet records message ids: add returns where id was first recorded, or records it
// at ref.
type idSet interface {
	add(id string, ref msgRef) (first msgRef, dup bool)
}

// stringIDs is the idSet of a document in memory.
type stringIDs map[string]msgRef

func (s stringIDs) add(id string, ref msgRef) (msgRef, bool) {
	if first, dup := s[id]; dup {
		return first, true
	}
	s[id] = ref
	return ref, false
}

// validateMessages checks each message of list and records its id in ids.
func validateMessages(list string, ms []chat.Message, ids idSet) error {
	for i, m := range ms {
		if err := validateListed(msgRef{list, i}, m, ids); err != nil {
			return err
		}
	}
	return nil
}

// validateListed checks the message at ref and records its id in ids.
func validateListed(ref msgRef, m chat.Message, ids idSet) error {
	if err := validateMessage(ref, m); err != nil {
		return err
	}
	if first, dup := ids.add(m.MessageID, ref); dup {
		return errIDTaken(ref, m.MessageID, first)
	}
	return nil
}

// errIDTaken is the error of the message at ref whose id is that of the message at first.
func errIDTaken(ref msgRef, id string, first msgRef) error {
	return fieldErr(member(ref.String(), "messageId"), strconv.Quote(id)+" is also "+member(first.String(), "messageId"))
}

// validateMessage applies chat.Message.Validate's rules one by one, so that the error
// names the field.
func validateMessage(ref msgRef, m chat.Message) error {
	if m.MessageID == "" {
		return fieldErr(member(ref.String(), "messageId"), "is empty")
	}
	if !m.Role.Valid() {
		return fieldErr(member(ref.String(), "role"), strconv.Quote(string(m.Role))+" is not system, user, assistant or tool")
	}
	if len(m.Contents) == 0 {
		return fieldErr(member(ref.String(), "contents"), "is empty: a message has at least one content")
	}
	for j, c := range m.Contents {
		if problem, name := contentProblem(c); problem != "" {
			return fieldErr(member(contentPath(ref.list, ref.i, j), name), problem)
		}
	}
	if j, name, problem := roleProblem(m); problem != "" {
		if j < 0 {
			return fieldErr(member(ref.String(), "contents"), problem)
		}
		return fieldErr(member(contentPath(ref.list, ref.i, j), name), problem)
	}
	if err := m.Validate(); err != nil { // a rule chat added that the checks above miss
		return fieldErr(ref.String(), err.Error())
	}
	return nil
}

// contentProblem returns what is wrong with c and the member it concerns ("" for the
// content itself), or "" when c is valid.
func contentProblem(c chat.Content) (problem, name string) {
	switch c.Type {
	case chat.ContentText:
		if strings.TrimSpace(c.Text) == "" {
			return "is blank", "text"
		}
	case chat.ContentImage:
		if c.URI == "" && c.Data == "" {
			return "is empty: an image needs uri, or data with mediaType", "uri"
		}
		if c.URI == "" && c.MediaType == "" {
			return "is empty: an image with data needs mediaType", "mediaType"
		}
	case chat.ContentFunctionCall:
		if c.CallID == "" {
			return "is empty", "callId"
		}
		if c.Name == "" {
			return "is empty", "name"
		}
	case chat.ContentFunctionResult:
		if c.CallID == "" {
			return "is empty", "callId"
		}
	case "":
		return "is empty", "type"
	default:
		if !isObject(c.Raw) {
			return "content of type " + strconv.Quote(c.Type) + " has no raw JSON object to write", ""
		}
	}
	return "", ""
}

func validatePendingTurns(ms []chat.Message) error {
	for i, m := range ms {
		if m.Role != chat.RoleUser {
			return fieldErr(member(index("pendingTurns", i), "role"), "is "+strconv.Quote(string(m.Role))+"; a pending turn is a user message")
		}
		for j, c := range m.Contents {
			if c.Type == chat.ContentFunctionCall || c.Type == chat.ContentFunctionResult {
				return fieldErr(member(contentPath("pendingTurns", i, j), "type"),
					"is "+c.Type+"; a pending user turn holds no tool calls or results")
			}
		}
	}
	return nil
}

func validateParticipants(ps []Participant) error {
	seen := make(map[string]int, len(ps))
	for i, p := range ps {
		field := index("participants", i)
		if p.ID == "" {
			return fieldErr(member(field, "id"), "is empty")
		}
		if first, dup := seen[p.ID]; dup {
			return fieldErr(member(field, "id"), strconv.Quote(p.ID)+" is also participants["+strconv.Itoa(first)+"].id")
		}
		seen[p.ID] = i
		if p.Type == "" {
			return fieldErr(member(field, "type"), "is empty")
		}
	}
	return nil
}

func validateChannels(cs []Channel) error {
	seen := make(map[string]int, len(cs))
	for i, c := range cs {
		field := index("channels", i)
		if problem := channelKeyProblem(c.ChannelKey); problem != "" {
			return fieldErr(member(field, "channelKey"), problem)
		}
		if first, dup := seen[c.ChannelKey]; dup {
			return fieldErr(member(field, "channelKey"), "is also channels["+strconv.Itoa(first)+"].channelKey")
		}
		seen[c.ChannelKey] = i
		if c.ChannelType == "" {
			return fieldErr(member(field, "channelType"), "is empty")
		}
		if len(c.ChannelState) > 0 && !isObject(c.ChannelState) {
			return fieldErr(member(field, "channelState"), "is not a JSON object")
		}
	}
	return nil
}

// channelKeyProblem says what is wrong with k, or "" when k is base64 (standard,
// padded, canonical) of 32 bytes, as chat.ChannelKey makes it.
func channelKeyProblem(k string) string {
	if k == "" {
		return "is empty"
	}
	b, err := base64.StdEncoding.Strict().DecodeString(k)
	if err != nil {
		return strconv.Quote(k) + " is not standard base64 with padding"
	}
	if len(b) != 32 {
		return strconv.Quote(k) + " is " + strconv.Itoa(len(b)) + " bytes, not the 32 of a SHA-256"
	}
	return ""
}

func validateStrategy(field string, s Strategy) error {
	if s.Type == "" {
		return fieldErr(member(field, "type"), "is empty")
	}
	if len(s.State) > 0 && !isObject(s.State) {
		return fieldErr(member(field, "state"), "is not a JSON object")
	}
	return nil
}

// isObject reports whether raw is one valid JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(raw)
}
