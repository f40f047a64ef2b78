package wire

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
)

// Validate checks the chat's input as the workflow does before anything runs; clients
// call it before they start a chat. Errors name the field and, for sizes, the limit.
func (in AgentChatInput) Validate() error {
	if in.Version > InputVersion {
		return fmt.Errorf("input version %d is newer than this worker understands (%d)", in.Version, InputVersion)
	}
	if len(in.Participants) == 0 {
		return errors.New("a chat needs at least one participant")
	}
	for i, id := range in.Participants {
		if strings.TrimSpace(id) == "" {
			return fmt.Errorf("participants[%d] is empty: name an agent id", i)
		}
		if j := slices.Index(in.Participants, id); j < i {
			return fmt.Errorf("participants[%d]: agent id %q is named twice (also participants[%d])", i, id, j)
		}
	}
	if in.MaxMessageBytes < 0 || in.MaxMessageBytes > MaxMessageBytesLimit {
		return fmt.Errorf("maxMessageBytes is %d; it must be between 0 (the default, %d) and %d (MaxMessageBytesLimit)",
			in.MaxMessageBytes, DefaultMaxMessageBytes, MaxMessageBytesLimit)
	}
	if err := in.History.Validate(); err != nil {
		return err
	}
	if err := in.Selection.Validate(in.Participants); err != nil {
		return err
	}
	return in.Termination.Validate(in.Participants)
}

// EffectiveMaxMessageBytes is the user message cap in effect.
func (in AgentChatInput) EffectiveMaxMessageBytes() int {
	if in.MaxMessageBytes > 0 {
		return in.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

// Validate checks the input's shape as the SendMessage validator does, with the largest
// size limit any chat may have (MaxMessageBytesLimit); the chat applies its own
// maxMessageBytes. Clients call it before they send: what it refuses could not reach the
// workflow whole.
func (in SendMessageInput) Validate() error {
	if n := in.Bytes(); n > MaxMessageBytesLimit {
		return fmt.Errorf("message is %d bytes encoded; no chat accepts more than %d (MaxMessageBytesLimit)", n, MaxMessageBytesLimit)
	}
	_, err := in.Message(MaxMessageBytesLimit)
	return err
}

// Message turns the input into the user message it carries, checking its shape and size.
func (in SendMessageInput) Message(maxBytes int) (chat.Message, error) {
	if strings.TrimSpace(in.MessageID) == "" {
		return chat.Message{}, errors.New("messageId is required: any string unique in this chat; it makes retries safe")
	}
	if in.Text != "" && len(in.Contents) > 0 {
		return chat.Message{}, errors.New(`give "text" or "contents", not both`)
	}
	m := chat.Message{MessageID: in.MessageID, Role: chat.RoleUser, AuthorName: in.AuthorName, Contents: in.Contents}
	if in.Text != "" {
		m.Contents = []chat.Content{chat.Text(in.Text)}
	}
	if err := m.Validate(); err != nil {
		return chat.Message{}, err
	}
	for _, c := range m.Contents {
		if c.Type == chat.ContentFunctionCall || c.Type == chat.ContentFunctionResult {
			return chat.Message{}, fmt.Errorf("a user message cannot carry %s contents", c.Type)
		}
	}
	if n := MessageBytes(m); n > maxBytes {
		return chat.Message{}, fmt.Errorf("message is %d bytes encoded; %s %d (maxMessageBytes; the most any chat accepts is %d)",
			n, OverChatLimit, maxBytes, MaxMessageBytesLimit)
	}
	return m, nil
}

// StrategyAgents are the selector and judge agents the strategies name; the chat
// resolves them when it starts, so an unknown one fails it at once.
func (in AgentChatInput) StrategyAgents() []string {
	var out []string
	add := func(a string) {
		if !slices.Contains(out, a) && !slices.Contains(in.Participants, a) {
			out = append(out, a)
		}
	}
	if in.Selection.Type == strategies.SelectionLLM {
		add(in.Selection.Agent)
	}
	for _, a := range in.Termination.JudgeAgents() {
		add(a)
	}
	return out
}
