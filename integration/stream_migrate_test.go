package integration_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// followTurns follows chat id from 0 in the background until it has seen the turnDone
// of turn last, its stream ends, or a minute passes; it returns the events and the
// error the stream ended with.
func followTurns(t *testing.T, c *agentchat.Client, id, last string) func() ([]agentchat.Event, error) {
	type outcome struct {
		evs []agentchat.Event
		err error
	}
	out := make(chan outcome, 1)
	ctx, cancel := context.WithTimeout(ctxFor(t), time.Minute)
	go func() {
		defer cancel()
		var o outcome
		for ev, err := range c.Follow(ctx, id, 0) {
			if err != nil {
				o.err = err
				break
			}
			o.evs = append(o.evs, ev)
			if ev.Type == wire.EventTurnDone && ev.TurnID == last {
				break
			}
		}
		out <- o
	}()
	return func() ([]agentchat.Event, error) {
		o := <-out
		return o.evs, o.err
	}
}

func turnsDone(evs []agentchat.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type == wire.EventTurnDone {
			out = append(out, ev.TurnID)
		}
	}
	return out
}

// A followed chat that migrates within the client's namespace (under a new chat id)
// is followed into the target, as across continue-as-new: the source's turn, then the
// target's, whose events say which chat their offsets are in.
func TestStreamFollowsAMigrationInTheNamespace(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	to := id + "-moved"
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	followed := followTurns(t, h.Client, id, "t2")
	send(t, h, id, "t1", "Hello")
	_, err = h.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: h.Namespace, ToChatID: to})
	require.NoError(t, err)
	send(t, h, to, "t2", "Still there?")

	evs, err := followed()
	require.NoError(t, err)
	assert.Equal(t, []string{"t1", "t2"}, turnsDone(evs))
	for _, ev := range evs {
		if ev.TurnID == "t2" {
			assert.Equal(t, to, ev.ChatID, "an event of the target names it: %+v", ev)
		} else {
			assert.Empty(t, ev.ChatID, "an event of the chat followed: %+v", ev)
		}
	}
	last := evs[len(evs)-1]
	rest := collectUntilCancelled(t, h.Client, last.ChatID, last.Offset+1)
	assert.Empty(t, rest, "resuming where the events say: nothing twice")
}

// A followed chat that migrates to another namespace, which the client does not
// reach, ends the stream after the source's events with a MigratedError that names
// where to follow it.
func TestStreamFollowEndsWithTheTargetOfAMigrationElsewhere(t *testing.T) {
	a := testenv.New(t, testenv.Options{})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-follow", TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	followed := followTurns(t, a.Client, id, "never")
	send(t, a, id, "t1", "Hello")
	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)

	evs, err := followed()
	assert.Equal(t, []string{"t1"}, turnsDone(evs))
	var moved *agentchat.MigratedError
	require.True(t, errors.As(err, &moved), "%v", err)
	assert.Equal(t, b.Namespace, moved.Target.Namespace)
	assert.Equal(t, id, moved.Target.ChatID)
	assert.Contains(t, err.Error(), b.Namespace)
}

// collectUntilCancelled reads c.Follow(chatID, from) for two seconds (a live chat's
// stream does not end) and returns what it gave; it fails the test on another error.
func collectUntilCancelled(t *testing.T, c *agentchat.Client, chatID string, from int64) []agentchat.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxFor(t), 2*time.Second)
	defer cancel()
	var out []agentchat.Event
	for ev, err := range c.Follow(ctx, chatID, from) {
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			break
		}
		out = append(out, ev)
	}
	return out
}
