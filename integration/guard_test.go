package integration_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// queryCounter counts the Temporal client's queries by name.
type queryCounter struct {
	interceptor.ClientInterceptorBase
	mu     sync.Mutex
	byName map[string]int
}

func (q *queryCounter) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &countingOutbound{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, q: q}
}

func (q *queryCounter) count(name string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.byName[name]
}

type countingOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	q *queryCounter
}

func (o *countingOutbound) QueryWorkflow(ctx context.Context, in *interceptor.ClientQueryWorkflowInput) (converter.EncodedValue, error) {
	o.q.mu.Lock()
	o.q.byName[in.QueryType]++
	o.q.mu.Unlock()
	return o.Next.QueryWorkflow(ctx, in)
}

// A client without a key ring asks a chat's State before its first write only when
// the chat has not yet answered it in the clear: not after it started the chat, nor
// after any query it read; a client new to the chat asks once, then never again.
func TestKeylessClientAsksNoStateOfAChatThatAnsweredInTheClear(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	newClient := func() (*agentchat.Client, *queryCounter) {
		q := &queryCounter{byName: map[string]int{}}
		tc, err := client.Dial(client.Options{HostPort: testenv.Address(t), Namespace: h.Namespace, Interceptors: []interceptor.ClientInterceptor{q}})
		require.NoError(t, err)
		t.Cleanup(tc.Close)
		return agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: h.TaskQueue, Namespace: h.Namespace}), q
	}
	id := testenv.ChatID(t)
	starter, q := newClient()
	_, err := starter.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = starter.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Hello"})
	require.NoError(t, err)
	assert.Zero(t, q.count(wire.StateQuery), "the start answered in the clear")

	reader, q := newClient()
	_, err = reader.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	_, err = reader.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "Again"})
	require.NoError(t, err)
	assert.Zero(t, q.count(wire.StateQuery), "History answered in the clear")

	other, q := newClient()
	for _, mid := range []string{"m3", "m4"} {
		_, err = other.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: mid, Text: "And again"})
		require.NoError(t, err)
	}
	assert.Equal(t, 1, q.count(wire.StateQuery), "asked once, before its first write")
}
