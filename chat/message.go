package chat

import (
	"strings"
	"time"
)

// Role says who wrote a message. The four roles are those of chat-state-v1.md, which
// match OpenAI's Chat Completions roles.
type Role string

// The roles of chat-state-v1.md.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Message is one entry of a chat's primary history.
//
// JSON: {"messageId","role","authorName"?,"agentId"?,"createdAt"?,"contents":[…],"usage"?}.
// MessageID is unique within a chat: user messages carry the id the client chose (the
// idempotency key of a turn); agent replies get "<turn messageId>/<n>", n from 1.
type Message struct {
	MessageID  string    `json:"messageId"`
	Role       Role      `json:"role"`
	AuthorName string    `json:"authorName,omitempty"`
	AgentID    string    `json:"agentId,omitempty"`
	CreatedAt  time.Time `json:"createdAt,omitzero"`
	Contents   []Content `json:"contents"`
	// Incomplete marks an agent's reply cut short when its turn was stopped (the
	// CancelTurn update): the text it had written by then.
	Incomplete bool `json:"incomplete,omitempty"`
	// Usage is what the model call that wrote an assistant message cost, when the
	// provider reported it; nil otherwise (and on other roles).
	Usage *Usage `json:"usage,omitempty"`
}

// Text returns the message's text contents joined by a newline; "" when it has none.
func (m Message) Text() string {
	var parts []string
	for _, c := range m.Contents {
		if c.Type == ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// FunctionCalls returns the message's functionCall contents in order.
func (m Message) FunctionCalls() []Content {
	var calls []Content
	for _, c := range m.Contents {
		if c.Type == ContentFunctionCall {
			calls = append(calls, c)
		}
	}
	return calls
}

// Size returns an estimate of the message's encoded size in bytes: the sum of its
// content fields plus its ids. Validators use it to refuse oversize input before anything
// is written.
func (m Message) Size() int {
	n := len(m.MessageID) + len(m.AuthorName) + len(m.AgentID) + len(m.Role)
	if m.Usage != nil {
		n += len(m.Usage.Model) + 64 // the counts
	}
	for _, c := range m.Contents {
		n += c.size()
	}
	return n
}

// TextMessage returns a message with one text content.
func TextMessage(id string, role Role, author, text string) Message {
	return Message{MessageID: id, Role: role, AuthorName: author, Contents: []Content{Text(text)}}
}
