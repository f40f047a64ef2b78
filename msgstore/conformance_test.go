package msgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
)

// openFunc opens a fresh Store value on the store under test; the test closes it.
type openFunc func(t *testing.T) Store

// unknownRaw is a content of a type chat does not know, with HTML characters, escapes,
// non-ASCII text and field names of known types used with other JSON types: it must come
// back byte-for-byte.
const unknownRaw = `{"type":"x-audio","text":{"lang":"en"},"data":[1,2.50,-0],"note":"<b>&amp;</b> \u00e9 é \"q\"","arguments":null}`

// newChatID returns a chat id no earlier run used, so a shared server's old rows never
// interfere.
func newChatID(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return t.Name() + "/" + hex.EncodeToString(b[:])
}

func textMsg(id, text string) chat.Message {
	return chat.TextMessage(id, chat.RoleUser, "alice", text)
}

// sampleMessages are one of each kind the store must keep exactly.
func sampleMessages() []chat.Message {
	at := time.Date(2025, 3, 1, 12, 30, 45, 123456789, time.UTC)
	return []chat.Message{
		{MessageID: "u1", Role: chat.RoleUser, AuthorName: "alice", CreatedAt: at,
			Contents: []chat.Content{chat.Text("Hello <world> & \"friends\" — ünïcode ✓\nline 2")}},
		{MessageID: "u1/1", Role: chat.RoleAssistant, AgentID: "planner", CreatedAt: at.Add(time.Second),
			Contents: []chat.Content{
				chat.Text("let me look"),
				{Type: chat.ContentFunctionCall, CallID: "call_1", Name: "lookup", Arguments: `{"q":"x<y","n":[1,2]}`},
			}},
		{MessageID: "u1/2", Role: chat.RoleTool,
			Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "call_1", Result: "42", Error: "partial"}}},
		{MessageID: "u1/3", Role: chat.RoleAssistant, AgentID: "planner",
			Contents: []chat.Content{
				{Type: "x-audio", Raw: json.RawMessage(unknownRaw)},
				{Type: chat.ContentImage, Data: "aGk=", MediaType: "image/png"},
			}},
	}
}

func ids(msgs []chat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

// requireSameMessages fails unless got and want encode to the same bytes, in order.
func requireSameMessages(t *testing.T, want, got []chat.Message) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		wb, err := encode(want[i])
		require.NoError(t, err)
		gb, err := encode(got[i])
		require.NoError(t, err)
		require.Equal(t, string(wb), string(gb), "message %d (%s)", i, want[i].MessageID)
	}
}

// runConformance checks the Store contract against one implementation.
func runConformance(t *testing.T, open openFunc) {
	ctx := context.Background()

	t.Run("RoundTrip", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		want := sampleMessages()
		require.NoError(t, s.Put(ctx, chatID, want))
		got, err := s.Get(ctx, chatID, ids(want))
		require.NoError(t, err)
		requireSameMessages(t, want, got)
		assert.Equal(t, "Hello <world> & \"friends\" — ünïcode ✓\nline 2", got[0].Text())
		assert.True(t, got[0].CreatedAt.Equal(want[0].CreatedAt), "createdAt %v", got[0].CreatedAt)
		calls := got[1].FunctionCalls()
		require.Len(t, calls, 1)
		assert.Equal(t, `{"q":"x<y","n":[1,2]}`, calls[0].Arguments)
		assert.Equal(t, "42", got[2].Contents[0].Result)
		assert.Equal(t, "partial", got[2].Contents[0].Error)
		unknown := got[3].Contents[0]
		assert.False(t, unknown.Known())
		assert.Equal(t, unknownRaw, string(unknown.Raw), "unknown content must be kept byte-for-byte")
	})

	t.Run("GetFollowsOrderOfIDs", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		var msgs []chat.Message
		for _, id := range []string{"a", "b", "c", "d"} {
			msgs = append(msgs, textMsg(id, "text of "+id))
		}
		require.NoError(t, s.Put(ctx, chatID, msgs))
		got, err := s.Get(ctx, chatID, []string{"d", "a", "c", "a"})
		require.NoError(t, err)
		assert.Equal(t, []string{"d", "a", "c", "a"}, ids(got))
		assert.Equal(t, "text of d", got[0].Text())
		empty, err := s.Get(ctx, chatID, nil)
		require.NoError(t, err)
		assert.Empty(t, empty)
		require.NoError(t, s.Put(ctx, chatID, nil), "an empty Put is a no-op")
	})

	t.Run("IdempotentPut", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		first := sampleMessages()
		require.NoError(t, s.Put(ctx, chatID, first))
		// A retried activity writes the same messages again, maybe with new ones and
		// the same id twice in one call.
		again := append(sampleMessages(), textMsg("u2", "next turn"), textMsg("u2", "next turn"))
		require.NoError(t, s.Put(ctx, chatID, again))
		require.NoError(t, s.Put(ctx, chatID, again))
		got, err := s.Get(ctx, chatID, ids(again[:len(again)-1]))
		require.NoError(t, err)
		requireSameMessages(t, again[:len(again)-1], got)
	})

	t.Run("ConflictOnChangedBody", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		require.NoError(t, s.Put(ctx, chatID, []chat.Message{textMsg("m1", "original")}))

		err := s.Put(ctx, chatID, []chat.Message{textMsg("fresh", "new"), textMsg("m1", "rewritten")})
		require.ErrorIs(t, err, ErrConflict)
		assert.Contains(t, err.Error(), `"m1"`)
		assert.NotErrorIs(t, err, ErrUnavailable)
		_, err = s.Get(ctx, chatID, []string{"fresh"})
		require.ErrorIs(t, err, ErrNotFound, "a Put that conflicts writes nothing")

		changedAuthor := textMsg("m1", "original")
		changedAuthor.AuthorName = "mallory"
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{changedAuthor}), ErrConflict)

		got, err := s.Get(ctx, chatID, []string{"m1"})
		require.NoError(t, err)
		assert.Equal(t, "original", got[0].Text())
		assert.Equal(t, "alice", got[0].AuthorName)

		err = s.Put(ctx, chatID, []chat.Message{textMsg("dup", "one"), textMsg("dup", "two")})
		require.ErrorIs(t, err, ErrConflict, "one id with two bodies in one call")
	})

	t.Run("NotFoundNamesID", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		require.NoError(t, s.Put(ctx, chatID, []chat.Message{textMsg("here", "x")}))
		_, err := s.Get(ctx, chatID, []string{"here", "not-here"})
		require.ErrorIs(t, err, ErrNotFound)
		assert.Contains(t, err.Error(), `"not-here"`)
		assert.NotContains(t, err.Error(), `"here"`)
		assert.NotErrorIs(t, err, ErrUnavailable)
	})

	t.Run("ChatsAreIsolated", func(t *testing.T) {
		s := open(t)
		chatA, chatB := newChatID(t), newChatID(t)
		require.NoError(t, s.Put(ctx, chatA, []chat.Message{textMsg("m1", "in A")}))
		_, err := s.Get(ctx, chatB, []string{"m1"})
		require.ErrorIs(t, err, ErrNotFound)
		require.NoError(t, s.Put(ctx, chatB, []chat.Message{textMsg("m1", "in B")}), "same id, other chat: no conflict")
		a, err := s.Get(ctx, chatA, []string{"m1"})
		require.NoError(t, err)
		b, err := s.Get(ctx, chatB, []string{"m1"})
		require.NoError(t, err)
		assert.Equal(t, "in A", a[0].Text())
		assert.Equal(t, "in B", b[0].Text())
	})

	t.Run("InvalidArguments", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		require.ErrorIs(t, s.Put(ctx, "", []chat.Message{textMsg("m", "x")}), ErrInvalid)
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{textMsg("", "x")}), ErrInvalid)
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{textMsg("a\x00b", "x")}), ErrInvalid)
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{textMsg("\xff", "x")}), ErrInvalid)
		unwritable := chat.Message{MessageID: "m", Role: chat.RoleUser, Contents: []chat.Content{{Type: "x-raw-missing"}}}
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{unwritable}), ErrInvalid)
		_, err := s.Get(ctx, "", []string{"m"})
		require.ErrorIs(t, err, ErrInvalid)
		_, err = s.Get(ctx, chatID, []string{""})
		require.ErrorIs(t, err, ErrInvalid)
	})

	t.Run("CanceledContextIsNotUnavailable", func(t *testing.T) {
		s := open(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.Put(cctx, newChatID(t), []chat.Message{textMsg("m", "x")})
		require.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, ErrUnavailable, "the caller gave up; the store did not fail")
	})

	t.Run("ConcurrentPuts", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		const workers, perWorker, batch = 8, 60, 10
		shared := []chat.Message{textMsg("shared-1", "same for all"), textMsg("shared-2", "same for all")}
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker)
		for w := range workers {
			wg.Go(func() {
				for i := 0; i < perWorker; i += batch {
					var msgs []chat.Message
					for j := i; j < i+batch; j++ {
						msgs = append(msgs, textMsg(fmt.Sprintf("w%d-%03d", w, j), fmt.Sprintf("worker %d message %d", w, j)))
					}
					// Every worker also writes the shared ids: idempotency under contention.
					msgs = append(msgs, shared...)
					if err := s.Put(ctx, chatID, msgs); err != nil {
						errs <- fmt.Errorf("worker %d batch %d: %w", w, i, err)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		var want []string
		for w := range workers {
			for j := range perWorker {
				want = append(want, fmt.Sprintf("w%d-%03d", w, j))
			}
		}
		want = append(want, "shared-1", "shared-2")
		got, err := s.Get(ctx, chatID, want)
		require.NoError(t, err)
		assert.Equal(t, want, ids(got))
		assert.Equal(t, "worker 7 message 59", got[7*perWorker+59].Text())
	})

	t.Run("TenThousandMessages", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		const total, batch = 10_000, 500
		all := make([]chat.Message, total)
		for i := range all {
			all[i] = textMsg(fmt.Sprintf("m%05d", i), fmt.Sprintf("message number %d", i))
		}
		start := time.Now()
		for i := 0; i < total; i += batch {
			require.NoError(t, s.Put(ctx, chatID, all[i:i+batch]))
		}
		put := time.Since(start)
		// Read back newest first, in one call, to see that order comes from the ids.
		rev := make([]string, total)
		for i := range rev {
			rev[i] = all[total-1-i].MessageID
		}
		start = time.Now()
		got, err := s.Get(ctx, chatID, rev)
		require.NoError(t, err)
		t.Logf("%s: put %d messages in batches of %d in %v, got them in one call in %v",
			s.Name(), total, batch, put, time.Since(start))
		require.Len(t, got, total)
		for i, m := range got {
			if m.MessageID != rev[i] || m.Text() != fmt.Sprintf("message number %d", total-1-i) {
				t.Fatalf("message %d is %s %q", i, m.MessageID, m.Text())
			}
		}
	})

	t.Run("UseAfterClose", func(t *testing.T) {
		s := open(t)
		chatID := newChatID(t)
		require.NoError(t, s.Put(ctx, chatID, []chat.Message{textMsg("m", "x")}))
		require.NoError(t, s.Close())
		require.NoError(t, s.Close(), "closing twice is a no-op")
		err := s.Put(ctx, chatID, []chat.Message{textMsg("m2", "y")})
		require.ErrorIs(t, err, ErrClosed)
		_, err = s.Get(ctx, chatID, []string{"m"})
		require.ErrorIs(t, err, ErrClosed)
		assert.False(t, errors.Is(err, ErrUnavailable), "a closed store is not worth retrying")
	})
}
