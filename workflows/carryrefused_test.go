package workflows_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// refusingStore stands in for the StoreMessages activity of a message store that
// refuses every write, as a store does for an id it holds with another body.
func refusingStore(_ context.Context, in wire.StoreMessagesInput) (wire.StoreMessagesResult, error) {
	return wire.StoreMessagesResult{}, temporal.NewNonRetryableApplicationError(
		"msgstore: sqlite put chat \""+in.ChatID+"\": message \""+in.Messages[0].MessageID+
			"\": message id already stored with a different body", wire.ErrTypeInvalidInput, nil)
}

// allPages reads the whole history, page by page.
func (e *env) allPages() []chat.Message {
	var out []chat.Message
	for {
		page := query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{Offset: len(out)})
		out = append(out, page.Messages...)
		if len(page.Messages) == 0 || len(out) >= page.Total {
			return out
		}
	}
}

// A chat whose carried state would pass CarryLimit because the message store refuses
// its bodies does not continue as new (Temporal would terminate it for the input's
// size): it stops taking turns with StoreRefused, in State's lastError and to senders,
// and stays readable; a retried turn still gets its first answer.
func TestCarryOverTheLimitStopsTurnsInsteadOfEndingTheChat(t *testing.T) {
	e := newEnv(t)
	e.env.RegisterActivityWithOptions(refusingStore, activity.RegisterOptions{Name: wire.StoreMessagesActivity})
	in := thread()
	in.MaxMessageBytes = wire.MaxMessageBytesLimit
	big := strings.Repeat("x", 700<<10)
	var outs []*outcome
	for i, id := range []string{"m1", "m2", "m3"} {
		outs = append(outs, e.send(time.Duration(i+1)*time.Second, msg(id, id+big)))
	}
	e.at(3500*time.Millisecond, func() { e.env.SetContinueAsNewSuggested(true) })
	refused := e.send(5*time.Second, msg("m4", "one more"))
	retried := e.send(5*time.Second, msg("m1", "m1"+big))
	e.at(6*time.Second, func() { e.env.SignalWorkflow(wire.UserMessageSignal, msg("s1", "by signal")) })
	var st, st2 wire.StateResult
	var hist []chat.Message
	e.at(4500*time.Millisecond, func() { st = e.state() })
	e.at(7*time.Second, func() { st2, hist = e.state(), e.allPages() })
	e.run(in, 8*time.Second)

	var can *workflow.ContinueAsNewError
	require.False(t, errors.As(e.env.GetWorkflowError(), &can), "the run continued as new with an input over CarryLimit")
	for _, o := range outs {
		require.NoError(t, o.err)
	}
	require.NotNil(t, st.LastError, "State says why the chat takes no turns")
	assert.Equal(t, wire.ErrTypeStoreRefused, st.LastError.Type)
	assert.Contains(t, st.LastError.Message, "already stored with a different body", "the store's own words")
	assert.Equal(t, wire.StatusRunning, st.Status)
	requireRefused(t, refused.rejected, wire.ErrTypeStoreRefused, "default-test-workflow-id")
	require.NoError(t, retried.rejected)
	require.NoError(t, retried.err)
	assert.Equal(t, outs[0].result.Messages[0].MessageID, retried.result.Messages[0].MessageID, "a retry gets the first answer")
	require.NotNil(t, st2.LastError)
	assert.Equal(t, wire.ErrTypeStoreRefused, st2.LastError.Type, "the signal is refused for the same reason")
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1", "m3", "m3/1"}, ids(hist), "the chat stays readable, whole")
	assert.Equal(t, "m1"+big, hist[0].Text())
}
