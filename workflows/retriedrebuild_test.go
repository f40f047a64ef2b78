package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
)

// Fault 10.S5 of the system test: a SendMessage that reaches a run before the run has
// rebuilt its idempotency record (with the first workflow task of a continued run,
// while a document is restored at the start, during an Import) is looked up in an
// empty record, queued as a new turn, and run a second time once the record is
// rebuilt: duplicate messageIds, and a chat that no longer exports. A retried answered
// messageId returns its first answer wherever it lands, without a model call.

// requireFirstAnswer checks that retry got the answer of turn m1 the history holds
// once, without a model call.
func requireFirstAnswer(t *testing.T, e *env, retry *outcome, want []string, hist []chat.Message) {
	t.Helper()
	require.True(t, retry.done)
	require.NoError(t, retry.rejected)
	require.NoError(t, retry.err)
	assert.Equal(t, want, ids(retry.result.Messages), "the first answer")
	assert.Zero(t, e.model.count(), "no model call")
	n := 0
	for _, m := range hist {
		if m.MessageID == "m1" {
			n++
		}
	}
	assert.Equal(t, 1, n, "m1 is in the history once: %v", ids(hist))
}

func TestRetryInTheFirstTaskOfAContinuedRunGetsTheFirstAnswer(t *testing.T) {
	first, next := continuedChat(t)

	e2 := newEnv(t)
	retry := e2.send(0, msg("m1", "Hello"))
	var hist []chat.Message
	e2.at(time.Minute, func() { hist = e2.history() })
	e2.run(next, 2*time.Minute)
	requireFirstAnswer(t, e2, retry, ids(first.result.Messages), hist)
}

func TestRetryWhileADocumentIsRestoredAtTheStartGetsTheFirstAnswer(t *testing.T) {
	e := newEnv(t)
	doc := document(t, []chatstate.Participant{helperP}, nil, chatstate.Strategies{})
	retry := e.send(0, msg("m1", "Hello, how are you?"))
	var hist []chat.Message
	e.at(time.Minute, func() { hist = e.history() })
	e.run(restoring(doc, "helper"), 2*time.Minute)
	requireFirstAnswer(t, e, retry, []string{"m1/1"}, hist)
}

func TestRetryDuringAnImportGetsTheFirstAnswer(t *testing.T) {
	e := newEnv(t)
	doc := document(t, []chatstate.Participant{helperP}, nil, chatstate.Strategies{})
	imported := e.importDoc(time.Second, doc)
	retry := e.send(time.Second, msg("m1", "Hello, how are you?"))
	var hist []chat.Message
	e.at(time.Minute, func() { hist = e.history() })
	e.run(thread(), 2*time.Minute)
	require.NoError(t, imported.err)
	requireFirstAnswer(t, e, retry, []string{"m1/1"}, hist)
}
