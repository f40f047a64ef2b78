package wire

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
)

// Channel types of the service-thread kinds (chat-state-v1.md channelType). The
// chat_history type of chat_completion agents is chat.ChannelChatHistory.
const (
	// ChannelResponsesThread is the channel of responses agents: the history lives in
	// OpenAI's Responses API as a chain of stored responses; the channel state is a
	// ResponsesThreadState.
	ChannelResponsesThread = "responses_thread"
	// ChannelAssistantThread is the channel of assistant agents: the history lives in an
	// OpenAI Assistants thread; the channel state is an AssistantThreadState.
	ChannelAssistantThread = "assistant_thread"
)

// Kinds lists every agent kind, in the order error messages name them.
var Kinds = []Kind{KindChatCompletion, KindResponses, KindAssistant}

// Channel describes how an agent kind sees the primary history.
type Channel struct {
	// Type is the document's channelType, e.g. "chat_history".
	Type string
	// Reducer names the history reducer's settings, part of the key of a local channel;
	// "none" for now. Service threads have no reducer (the service keeps the history).
	Reducer string
	// ServiceThread reports whether the history lives in the provider's service, in
	// which case the endpoint's identity is part of the key, and the channel state holds
	// the service's id and the watermark (the last primary messageId the service has).
	ServiceThread bool
	// Agent is the agent id, part of a service thread's key.
	Agent string
}

// Channel returns the channel of kind k, or an error for an unknown kind.
func (k Kind) Channel() (Channel, error) {
	switch k {
	case KindChatCompletion:
		return Channel{Type: chat.ChannelChatHistory, Reducer: strategies.ReducerNone}, nil
	case KindResponses:
		return Channel{Type: ChannelResponsesThread, ServiceThread: true}, nil
	case KindAssistant:
		return Channel{Type: ChannelAssistantThread, ServiceThread: true}, nil
	}
	known := make([]string, len(Kinds))
	for i, kind := range Kinds {
		known[i] = string(kind)
	}
	return Channel{}, fmt.Errorf("unknown agent kind %q (known: %s)", k, strings.Join(known, ", "))
}

// ServiceThread reports whether agents of kind k keep their history in the provider's
// service (responses, assistant); false for chat_completion and unknown kinds.
func (k Kind) ServiceThread() bool {
	ch, err := k.Channel()
	return err == nil && ch.ServiceThread
}

// Key returns the channel key (chat-state-v1.md), hashed by chat.ChannelKey from stable
// strings: for a local channel the type and reducer settings
// (chat.ChannelKey(type, "reducer="+reducer)); for a service thread the type and the
// agent's endpoint's base URL (baseURL) and the agent id (chat.ChannelKey(type, "endpoint="+baseURL,
// "agent="+id)), so that one service's ids are never given to another. Local channels
// of one kind and reducer are shared by their agents, as in the seed ADR; a service
// thread is the agent's own, so that the service sees every other agent's message as
// theirs (prefixed with their name), never as its own replies.
func (c Channel) Key(baseURL string) string {
	if c.ServiceThread {
		return chat.ChannelKey(c.Type, "endpoint="+baseURL, "agent="+c.Agent)
	}
	return chat.ChannelKey(c.Type, "reducer="+c.Reducer)
}

// ResponsesThreadState is the channelState of a responses_thread channel:
// {"previousResponseId":"resp_…","syncedThrough":"<messageId>"}. The zero value (JSON
// {} or no state at all) is a new channel, whose first call sends the whole history.
type ResponsesThreadState struct {
	// PreviousResponseID is the id of the latest response of the chain, sent as
	// previous_response_id on the next call.
	PreviousResponseID string `json:"previousResponseId,omitempty"`
	// SyncedThrough is the messageId of the last primary message the service holds (the
	// reply of the latest call): the watermark.
	SyncedThrough string `json:"syncedThrough,omitempty"`
	// LostResponseID records the latest chain the service no longer knew (a 404 for
	// its previous_response_id): the channel then started a new chain from the primary
	// history. Only a record; the next call does not send it.
	LostResponseID string `json:"lostResponseId,omitempty"`
}

// LostThreadState is the channel state of a service-thread channel (responses_thread
// or assistant_thread) whose conversation the service no longer knows: a new channel
// (its next call sends the whole primary history) that records what was lost, from the
// old state: {"lostResponseId":…} or {"lostThreadId":…}. A state of another channel
// type is returned as a new channel ({}).
func LostThreadState(channelType string, old json.RawMessage) json.RawMessage {
	var v any = struct{}{}
	switch channelType {
	case ChannelResponsesThread:
		var st ResponsesThreadState
		_ = DecodeChannelState(old, &st)
		v = ResponsesThreadState{LostResponseID: st.PreviousResponseID}
	case ChannelAssistantThread:
		var st AssistantThreadState
		_ = DecodeChannelState(old, &st)
		v = AssistantThreadState{LostThreadID: st.ThreadID}
	}
	b, _ := json.Marshal(v)
	return b
}

// AssistantThreadState is the channelState of an assistant_thread channel:
// {"threadId":"thread_…","syncedThrough":"<messageId>"}. The zero value is a new
// channel: its first call creates the thread.
type AssistantThreadState struct {
	// ThreadID is the Assistants thread that holds the channel's messages.
	ThreadID string `json:"threadId,omitempty"`
	// SyncedThrough is the messageId of the last primary message the thread holds: the
	// watermark.
	SyncedThrough string `json:"syncedThrough,omitempty"`
	// LostThreadID records the latest thread the service no longer knew (a 404): the
	// channel then started a new thread from the primary history. Only a record.
	LostThreadID string `json:"lostThreadId,omitempty"`
}

// DecodeChannelState decodes a service-thread channel state into v (a
// *ResponsesThreadState or *AssistantThreadState). Empty or "null" state leaves v as it
// is (a new channel); fields v does not know are ignored, so a newer state still loads.
func DecodeChannelState(state json.RawMessage, v any) error {
	s := strings.TrimSpace(string(state))
	if s == "" || s == "null" {
		return nil
	}
	if err := json.Unmarshal(state, v); err != nil {
		return fmt.Errorf("channel state %s: %w", state, err)
	}
	return nil
}

// SyncedThrough returns the watermark of a service-thread channel state: the messageId
// of the last primary message the service holds, "" for a new channel. The workflow
// sends a service-thread agent only the messages after it (InvokeInput.HistoryFrom).
func SyncedThrough(state json.RawMessage) (string, error) {
	var s struct {
		SyncedThrough string `json:"syncedThrough"`
	}
	if err := DecodeChannelState(state, &s); err != nil {
		return "", err
	}
	return s.SyncedThrough, nil
}
