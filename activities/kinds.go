package activities

import (
	"cmp"
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// agentKind is what the activities do differently for one agent kind (wire.Kind):
// the channel through which agents of the kind see the chat's history, and how one
// reply is made. New builds one per kind of wire.Kinds (newKinds); InvokeAgent picks
// the agent's by its kind, and refuses a kind that has none.
type agentKind interface {
	// channel is the kind's channel, as wire.Kind.Channel gives it: its document type,
	// and whether the service keeps the history (then history holds only what the
	// service has not seen, and the reply returns the channel's new state).
	channel() wire.Channel
	// invoke makes one reply of agent def to history (read by historyFor from in), with
	// the errors InvokeAgent documents.
	invoke(ctx context.Context, def agents.Definition, in wire.InvokeInput, history []chat.Message) (wire.InvokeResult, error)
}

// newKinds returns the implementation of every agent kind, by kind.
func newKinds(m *models) map[wire.Kind]agentKind {
	return map[wire.Kind]agentKind{
		wire.KindChatCompletion: chatCompletionKind{m},
		wire.KindResponses:      responsesKind{m},
		wire.KindAssistant:      assistantKind{m},
	}
}

// kindOf returns the implementation of def's kind; no kind is chat_completion
// (Definition.Kind's default, for definitions built in code). A kind this worker does
// not implement (a config that skipped agents.ParseConfig, or written for a newer
// worker) is a non-retryable InvalidInput naming the agent, the kind and the known
// kinds: it never falls back to another kind's API.
func (m *models) kindOf(def agents.Definition) (agentKind, error) {
	k, ok := m.kinds[cmp.Or(def.Kind, wire.KindChatCompletion)]
	if !ok {
		_, err := def.Kind.Channel() // names the known kinds
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %q: %v", def.ID, err),
			wire.ErrTypeInvalidInput, nil)
	}
	return k, nil
}

// channelOf is the channel of kind k, a kind of wire.Kinds.
func channelOf(k wire.Kind) wire.Channel {
	ch, _ := k.Channel()
	return ch
}

// chatCompletionKind is kind chat_completion: OpenAI Chat Completions, the history
// kept by agentchat (invokeChatCompletion).
type chatCompletionKind struct{ m *models }

func (chatCompletionKind) channel() wire.Channel { return channelOf(wire.KindChatCompletion) }

func (k chatCompletionKind) invoke(ctx context.Context, def agents.Definition, in wire.InvokeInput,
	history []chat.Message) (wire.InvokeResult, error) {
	return k.m.invokeChatCompletion(ctx, def, history, in.ToolChoice, in.Tools)
}

// responsesKind is kind responses: OpenAI's Responses API, the history kept by the
// service as a chain of stored responses (invokeResponses).
type responsesKind struct{ m *models }

func (responsesKind) channel() wire.Channel { return channelOf(wire.KindResponses) }

func (k responsesKind) invoke(ctx context.Context, def agents.Definition, in wire.InvokeInput,
	history []chat.Message) (wire.InvokeResult, error) {
	return k.m.invokeResponses(ctx, def, in, history)
}

// assistantKind is kind assistant: OpenAI's Assistants API, the history kept by the
// service in a thread (invokeAssistant).
type assistantKind struct{ m *models }

func (assistantKind) channel() wire.Channel { return channelOf(wire.KindAssistant) }

func (k assistantKind) invoke(ctx context.Context, def agents.Definition, in wire.InvokeInput,
	history []chat.Message) (wire.InvokeResult, error) {
	return k.m.invokeAssistant(ctx, def, in, history)
}
