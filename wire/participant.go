package wire

import (
	"fmt"
	"time"

	"github.com/agentchat/agentchat/strategies"
)

// Participant is an agent as a chat holds it: the agent's id, display name and kind
// (the document's participants entry: {"id","name","type"}), plus its channel and the
// settings of its model call activity, resolved from the registry when the chat starts.
type Participant struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Kind        Kind               `json:"type"`
	ChannelType string             `json:"channelType"`
	ChannelKey  string             `json:"channelKey"`
	Call        CallSettings       `json:"call"`
	Reducer     strategies.Reducer `json:"reducer,omitzero"`
	Tools       []ToolSpec         `json:"tools,omitempty"`
	// MaxToolRounds bounds the rounds of tool calls in one reply.
	MaxToolRounds int `json:"maxToolRounds,omitempty"`
}

// Kind is an agent kind: which model API it uses and so which channel it has.
type Kind string

// Agent kinds.
const (
	// KindChatCompletion is ChatCompletionAgent: OpenAI Chat Completions, history kept
	// by agentchat in a chat_history channel.
	KindChatCompletion Kind = "chat_completion"
	// KindResponses is ResponsesAgent: OpenAI's Responses API, history kept by the
	// service as a chain of stored responses (previous_response_id), in a
	// responses_thread channel. Calls are not streamed.
	KindResponses Kind = "responses"
	// KindAssistant is OpenAIAssistantAgent (the seed ADR): OpenAI's Assistants API,
	// history kept by the service in a thread, each reply a run, in an assistant_thread
	// channel.
	KindAssistant Kind = "assistant"
)

// CallSettings are the timeouts and retry policy of an agent's model call activity.
// Zero fields take the defaults named on each field.
type CallSettings struct {
	// Timeout is the start-to-close timeout of one attempt; default 5m.
	Timeout Duration `json:"timeout,omitempty"`
	// HeartbeatTimeout: a call that reports no progress for this long is retried on
	// another worker; default 15s (DefaultHeartbeatTimeout). A non-streaming call
	// heartbeats while it waits, however slow the model; a streaming call heartbeats on
	// every chunk, so this bounds the silence before the first chunk and between two.
	HeartbeatTimeout Duration `json:"heartbeatTimeout,omitempty"`
	// MaxAttempts bounds attempts on retryable provider errors; default 5.
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// InitialInterval is the first retry delay, doubled each attempt; default 1s. A
	// provider's Retry-After overrides it.
	InitialInterval Duration `json:"initialInterval,omitempty"`
	// MaxInterval caps the retry delay; default 30s.
	MaxInterval Duration `json:"maxInterval,omitempty"`
}

// DefaultHeartbeatTimeout is a model call's heartbeat timeout when the agent's config
// gives none. A worker that dies mid-call costs about this plus the retry delay and
// Temporal's 5 s sticky timeout (README, "Crashes"); it was 60s, a minute a crash.
const DefaultHeartbeatTimeout = 15 * time.Second

// WithDefaults returns s with every zero field set to its default.
func (s CallSettings) WithDefaults() CallSettings {
	s.Timeout = Duration(s.Timeout.Or(5 * time.Minute))
	s.HeartbeatTimeout = Duration(s.HeartbeatTimeout.Or(DefaultHeartbeatTimeout))
	if s.MaxAttempts <= 0 {
		s.MaxAttempts = 5
	}
	s.InitialInterval = Duration(s.InitialInterval.Or(time.Second))
	s.MaxInterval = Duration(s.MaxInterval.Or(30 * time.Second))
	return s
}

// Validate refuses settings that Temporal would refuse only when a chat schedules the
// call: negative durations, and a retry policy whose maxInterval (after defaults) is
// below its initialInterval.
func (s CallSettings) Validate() error {
	for _, f := range []struct {
		name string
		v    Duration
	}{
		{"timeout", s.Timeout}, {"heartbeatTimeout", s.HeartbeatTimeout},
		{"initialInterval", s.InitialInterval}, {"maxInterval", s.MaxInterval},
	} {
		if f.v < 0 {
			return fmt.Errorf("call.%s must not be negative", f.name)
		}
	}
	if d := s.WithDefaults(); d.MaxInterval < d.InitialInterval {
		return fmt.Errorf("call.maxInterval (%s) must not be less than call.initialInterval (%s)",
			time.Duration(d.MaxInterval), time.Duration(d.InitialInterval))
	}
	return nil
}
