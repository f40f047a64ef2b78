package workflows_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// The error of a failed turn says what the chat holds, and its advice works: a turn
// taken back whole may be sent again with its messageId (and is answered); a resumed
// turn whose approved calls ran keeps their results, so its error is TurnFailed and says
// to send a new message, which the chat then answers. State's lastError is cleared once
// a turn begun after the failure is answered.

func storeDown() error {
	return temporal.NewNonRetryableApplicationError("message store unavailable: connection refused", wire.ErrTypeStoreUnavailable, nil)
}

// appErr returns err's application error, failing the test when there is none.
func appErr(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "not an application error: %v", err)
	return app
}

// failureDetails is the TurnError an application error carries.
func failureDetails(t *testing.T, app *temporal.ApplicationError) wire.TurnError {
	t.Helper()
	var d wire.TurnError
	require.True(t, app.HasDetails(), "the error carries the failed turn: %v", app)
	require.NoError(t, app.Details(&d))
	return d
}

func TestAStoreFailureAfterApprovedCallsRanSaysTheChatKeepsThem(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":"1001"}`)}
	e.model.errs["clerk#2"] = storeDown()
	e.model.replies["clerk#3"] = "the refund went through"
	e.send(time.Second, msg("m1", "refund order 1001"))
	approved := e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
	var failed wire.StateResult
	e.at(2*time.Minute, func() { failed = e.state() })
	resent := e.send(3*time.Minute, msg("m1", "refund order 1001"))
	next := e.send(4*time.Minute, msg("m2", "did the refund go through?"))
	var after wire.StateResult
	var hist []chat.Message
	e.at(5*time.Minute, func() { after, hist = e.state(), e.history() })
	e.run(clerk(), 6*time.Minute)

	require.True(t, approved.done)
	app := appErr(t, approved.err)
	assert.Equal(t, wire.ErrTypeTurnFailed, app.Type(), "the README's promise: %v", approved.err)
	assert.Contains(t, app.Message(), "message store unavailable", "the cause")
	assert.Contains(t, app.Message(), "m1/1", "what the chat keeps")
	assert.Contains(t, app.Message(), "send a new message")
	assert.NotContains(t, app.Message(), "left nothing")
	assert.NotContains(t, app.Message(), "send it again")
	d := failureDetails(t, app)
	assert.Equal(t, wire.ErrTypeStoreUnavailable, d.Type, "the details name the cause")
	assert.True(t, d.Kept, "the details say the chat keeps the turn")
	require.NotNil(t, failed.LastError)
	assert.True(t, failed.LastError.Kept)
	assert.Equal(t, []string{"c1"}, ft.ran)

	// The advice works: the same messageId is refused (consistently), a new message is answered.
	require.Error(t, resent.rejected)
	rapp := appErr(t, resent.rejected)
	assert.Equal(t, wire.ErrTypeTurnFailed, rapp.Type())
	assert.Contains(t, rapp.Message(), "send a new message")
	assert.True(t, failureDetails(t, rapp).Kept)
	require.NoError(t, next.err)
	assert.Equal(t, "the refund went through", next.result.Messages[len(next.result.Messages)-1].Text())
	assert.Nil(t, after.LastError, "a later turn was answered: lastError is cleared")
	assert.Equal(t, []string{"m1", "m1/1", "m1/2", "m2", "m2/1"}, ids(hist))
}

func TestAStoreFailureOfATurnTakenBackMayBeSentAgain(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.errs["helper#1"] = storeDown()
	e.model.replies["helper#2"] = "stored this time"
	first := e.send(time.Second, msg("m1", "a long answer please"))
	var failed wire.StateResult
	e.at(time.Minute, func() { failed = e.state() })
	again := e.send(2*time.Minute, msg("m1", "a long answer please"))
	var after wire.StateResult
	e.at(3*time.Minute, func() { after = e.state() })
	e.run(thread(), 4*time.Minute)

	app := appErr(t, first.err)
	assert.Equal(t, wire.ErrTypeStoreUnavailable, app.Type())
	assert.Contains(t, app.Message(), `send it again (messageId "m1")`)
	assert.False(t, failureDetails(t, app).Kept)
	require.NotNil(t, failed.LastError)
	assert.False(t, failed.LastError.Kept)
	require.NoError(t, again.rejected)
	require.NoError(t, again.err, "the advice works")
	assert.Equal(t, "stored this time", again.result.Messages[0].Text())
	assert.Nil(t, after.LastError)
}

// lastError is the latest failure until a turn begun after it is answered: a failed
// turn's is cleared by the next turn answered, whatever its messageId; a signal refused
// while a turn runs stays past that turn's answer, and goes with the next one.
func TestLastErrorIsClearedByTheNextTurnAnswered(t *testing.T) {
	e := newEnv(t)
	e.slowModel(10 * time.Second)
	e.model.errs["helper#1"] = rejected400()
	e.send(time.Second, msg("m1", "first"))
	var afterFail wire.StateResult
	e.at(time.Minute, func() { afterFail = e.state() })
	e.send(2*time.Minute, msg("m2", "second"))
	e.at(2*time.Minute+time.Second, func() { // while m2 runs
		e.env.SignalWorkflow(wire.UserMessageSignal, wire.SendMessageInput{MessageID: "bad", Text: "  "})
	})
	var afterM2 wire.StateResult
	e.at(3*time.Minute, func() { afterM2 = e.state() })
	e.send(4*time.Minute, msg("m3", "third"))
	var afterM3 wire.StateResult
	e.at(5*time.Minute, func() { afterM3 = e.state() })
	e.run(thread(), 6*time.Minute)

	require.NotNil(t, afterFail.LastError)
	assert.Equal(t, "m1", afterFail.LastError.MessageID)
	require.NotNil(t, afterM2.LastError, "the signal was refused after m2 began: its error stays")
	assert.Equal(t, "bad", afterM2.LastError.MessageID)
	assert.Nil(t, afterM3.LastError, "m3 began after the refusal and was answered")
}

// A turn refused while a call waits says to decide the calls, then send the turn again:
// done so, the same messageId is answered.
func TestATurnRefusedWhileACallWaitsIsAnsweredWhenSentAgain(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":"1001"}`)}
	e.model.replies["clerk#2"] = "refunded"
	e.model.replies["clerk#3"] = "hello again"
	e.send(time.Second, msg("m1", "refund order 1001"))
	refused := e.send(2*time.Second, msg("m2", "hello?"))
	e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
	again := e.send(2*time.Minute, msg("m2", "hello?"))
	e.run(clerk(), 3*time.Minute)

	app := appErr(t, refused.rejected)
	assert.Equal(t, wire.ErrTypeAwaitingApproval, app.Type())
	assert.Contains(t, app.Message(), "then send the turn again")
	require.NoError(t, again.rejected)
	require.NoError(t, again.err, "the advice works")
	assert.Equal(t, "hello again", again.result.Messages[0].Text())
}
