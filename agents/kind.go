package agents

import (
	"fmt"

	"github.com/agentchat/agentchat/chat"
)

// Channel describes how an agent kind sees the primary history.
type Channel struct {
	// Type is the document's channelType, e.g. "chat_history".
	Type string
	// Reducer names the history reducer's settings, part of the key; "none" for now.
	Reducer string
	// ServiceThread reports whether the history lives in the provider's service, in
	// which case the endpoint's identity is part of the key.
	ServiceThread bool
}

// Channel returns the channel of kind k, or an error for an unknown kind.
func (k Kind) Channel() (Channel, error) {
	switch k {
	case KindChatCompletion:
		return Channel{Type: chat.ChannelChatHistory, Reducer: "none"}, nil
	}
	return Channel{}, fmt.Errorf("unknown agent kind %q (known: %s)", k, KindChatCompletion)
}

// Key returns the channel key (chat-state-v1.md): the channel type and reducer
// settings, and for a service thread the endpoint's base URL, hashed by chat.ChannelKey.
// Agents of one kind with the same settings share a channel, as in the seed ADR.
func (c Channel) Key(e Endpoint) string {
	parts := []string{c.Type, "reducer=" + c.Reducer}
	if c.ServiceThread {
		parts = append(parts, "endpoint="+e.BaseURL)
	}
	return chat.ChannelKey(parts...)
}
