// Package msgstoretest is the conformance suite of msgstore.Store: Run checks the
// contract against one implementation (round trips that keep every byte, idempotent
// Put, ErrConflict, Get's order, ErrNotFound naming the id, chats kept apart,
// ErrInvalid, a canceled caller not being ErrUnavailable, concurrent writers, 10,000
// messages, use after Close), and, when the store is also a msgstore.PageStore, that
// contract too (idempotent PutPage, ErrConflict naming both digests or both indexes,
// ErrPageMissing, LookupIDs across lineages and below a fork index, DeleteLineage
// leaving other lineages). RunSealedPages checks msgstore.Sealed's pages over a
// PageStore. Every store's tests call Run, the stores of this module
// (msgstore/sqlite, msgstore/postgres) and yours:
//
//	func TestConformance(t *testing.T) {
//		msgstoretest.Run(t, func(t *testing.T) msgstore.Store {
//			s := mystore.Open(...)
//			t.Cleanup(func() { _ = s.Close() })
//			return s
//		})
//	}
//
// The helpers (SampleMessages, RequireSameMessages, ...) are for a store's own tests.
package msgstoretest

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
	"github.com/agentchat/agentchat/msgstore"
)

// OpenFunc opens a fresh Store value on the store under test; Run closes it in one
// subtest (UseAfterClose) and the function's t.Cleanup may close it again (closing
// twice is a no-op). The values it returns may share their data: every subtest uses
// chat ids of its own (NewChatID).
type OpenFunc func(t *testing.T) msgstore.Store

// UnknownRaw is a content of a type chat does not know, with HTML characters, escapes,
// non-ASCII text and field names of known types used with other JSON types: it must come
// back byte-for-byte.
const UnknownRaw = `{"type":"x-audio","text":{"lang":"en"},"data":[1,2.50,-0],"note":"<b>&amp;</b> \u00e9 é \"q\"","arguments":null}`

// NewChatID returns a chat id no earlier run used (the test's name and random hex), so
// a shared server's old rows never interfere.
func NewChatID(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return t.Name() + "/" + hex.EncodeToString(b[:])
}

// TextMessage is a user message from alice with one text content.
func TextMessage(id, text string) chat.Message {
	return chat.TextMessage(id, chat.RoleUser, "alice", text)
}

// SampleMessages are one of each kind a store must keep exactly: text with HTML
// characters and non-ASCII, a function call, a function result with an error, a
// content of an unknown type (UnknownRaw) and an image.
func SampleMessages() []chat.Message {
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
				{Type: "x-audio", Raw: json.RawMessage(UnknownRaw)},
				{Type: chat.ContentImage, Data: "aGk=", MediaType: "image/png"},
			}},
	}
}

// IDs returns the message ids of msgs, in order.
func IDs(msgs []chat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

// RequireSameMessages fails t unless got and want have the same stored bodies
// (msgstore.EncodeBody), in order.
func RequireSameMessages(t *testing.T, want, got []chat.Message) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		wb, err := msgstore.EncodeBody(want[i])
		require.NoError(t, err)
		gb, err := msgstore.EncodeBody(got[i])
		require.NoError(t, err)
		require.Equal(t, string(wb), string(gb), "message %d (%s)", i, want[i].MessageID)
	}
}

// Run checks the msgstore.Store contract against the implementation open opens, in
// subtests, and the msgstore.PageStore contract in subtest Pages when it has it
// (skipped otherwise).
func Run(t *testing.T, open OpenFunc) {
	ctx := context.Background()

	t.Run("Pages", func(t *testing.T) {
		if _, ok := open(t).(msgstore.PageStore); !ok {
			t.Skip("not a msgstore.PageStore")
		}
		runPages(t, func(t *testing.T) msgstore.PageStore { return open(t).(msgstore.PageStore) })
	})

	t.Run("RoundTrip", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		want := SampleMessages()
		require.NoError(t, s.Put(ctx, chatID, want))
		got, err := s.Get(ctx, chatID, IDs(want))
		require.NoError(t, err)
		RequireSameMessages(t, want, got)
		assert.Equal(t, "Hello <world> & \"friends\" — ünïcode ✓\nline 2", got[0].Text())
		assert.True(t, got[0].CreatedAt.Equal(want[0].CreatedAt), "createdAt %v", got[0].CreatedAt)
		calls := got[1].FunctionCalls()
		require.Len(t, calls, 1)
		assert.Equal(t, `{"q":"x<y","n":[1,2]}`, calls[0].Arguments)
		assert.Equal(t, "42", got[2].Contents[0].Result)
		assert.Equal(t, "partial", got[2].Contents[0].Error)
		unknown := got[3].Contents[0]
		assert.False(t, unknown.Known())
		assert.Equal(t, UnknownRaw, string(unknown.Raw), "unknown content must be kept byte-for-byte")
	})

	t.Run("GetFollowsOrderOfIDs", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		var msgs []chat.Message
		for _, id := range []string{"a", "b", "c", "d"} {
			msgs = append(msgs, TextMessage(id, "text of "+id))
		}
		require.NoError(t, s.Put(ctx, chatID, msgs))
		got, err := s.Get(ctx, chatID, []string{"d", "a", "c", "a"})
		require.NoError(t, err)
		assert.Equal(t, []string{"d", "a", "c", "a"}, IDs(got))
		assert.Equal(t, "text of d", got[0].Text())
		empty, err := s.Get(ctx, chatID, nil)
		require.NoError(t, err)
		assert.Empty(t, empty)
		require.NoError(t, s.Put(ctx, chatID, nil), "an empty Put is a no-op")
	})

	t.Run("IdempotentPut", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		first := SampleMessages()
		require.NoError(t, s.Put(ctx, chatID, first))
		// A retried activity writes the same messages again, maybe with new ones and
		// the same id twice in one call.
		again := append(SampleMessages(), TextMessage("u2", "next turn"), TextMessage("u2", "next turn"))
		require.NoError(t, s.Put(ctx, chatID, again))
		require.NoError(t, s.Put(ctx, chatID, again))
		got, err := s.Get(ctx, chatID, IDs(again[:len(again)-1]))
		require.NoError(t, err)
		RequireSameMessages(t, again[:len(again)-1], got)
	})

	t.Run("ConflictOnChangedBody", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		require.NoError(t, s.Put(ctx, chatID, []chat.Message{TextMessage("m1", "original")}))

		err := s.Put(ctx, chatID, []chat.Message{TextMessage("fresh", "new"), TextMessage("m1", "rewritten")})
		require.ErrorIs(t, err, msgstore.ErrConflict)
		assert.Contains(t, err.Error(), `"m1"`)
		assert.NotErrorIs(t, err, msgstore.ErrUnavailable)
		_, err = s.Get(ctx, chatID, []string{"fresh"})
		require.ErrorIs(t, err, msgstore.ErrNotFound, "a Put that conflicts writes nothing")

		changedAuthor := TextMessage("m1", "original")
		changedAuthor.AuthorName = "mallory"
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{changedAuthor}), msgstore.ErrConflict)

		got, err := s.Get(ctx, chatID, []string{"m1"})
		require.NoError(t, err)
		assert.Equal(t, "original", got[0].Text())
		assert.Equal(t, "alice", got[0].AuthorName)

		err = s.Put(ctx, chatID, []chat.Message{TextMessage("dup", "one"), TextMessage("dup", "two")})
		require.ErrorIs(t, err, msgstore.ErrConflict, "one id with two bodies in one call")
	})

	t.Run("NotFoundNamesID", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		require.NoError(t, s.Put(ctx, chatID, []chat.Message{TextMessage("here", "x")}))
		_, err := s.Get(ctx, chatID, []string{"here", "not-here"})
		require.ErrorIs(t, err, msgstore.ErrNotFound)
		assert.Contains(t, err.Error(), `"not-here"`)
		assert.NotContains(t, err.Error(), `"here"`)
		assert.NotErrorIs(t, err, msgstore.ErrUnavailable)
	})

	t.Run("ChatsAreIsolated", func(t *testing.T) {
		s := open(t)
		chatA, chatB := NewChatID(t), NewChatID(t)
		require.NoError(t, s.Put(ctx, chatA, []chat.Message{TextMessage("m1", "in A")}))
		_, err := s.Get(ctx, chatB, []string{"m1"})
		require.ErrorIs(t, err, msgstore.ErrNotFound)
		require.NoError(t, s.Put(ctx, chatB, []chat.Message{TextMessage("m1", "in B")}), "same id, other chat: no conflict")
		a, err := s.Get(ctx, chatA, []string{"m1"})
		require.NoError(t, err)
		b, err := s.Get(ctx, chatB, []string{"m1"})
		require.NoError(t, err)
		assert.Equal(t, "in A", a[0].Text())
		assert.Equal(t, "in B", b[0].Text())
	})

	t.Run("InvalidArguments", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		require.ErrorIs(t, s.Put(ctx, "", []chat.Message{TextMessage("m", "x")}), msgstore.ErrInvalid)
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{TextMessage("", "x")}), msgstore.ErrInvalid)
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{TextMessage("a\x00b", "x")}), msgstore.ErrInvalid)
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{TextMessage("\xff", "x")}), msgstore.ErrInvalid)
		unwritable := chat.Message{MessageID: "m", Role: chat.RoleUser, Contents: []chat.Content{{Type: "x-raw-missing"}}}
		require.ErrorIs(t, s.Put(ctx, chatID, []chat.Message{unwritable}), msgstore.ErrInvalid)
		_, err := s.Get(ctx, "", []string{"m"})
		require.ErrorIs(t, err, msgstore.ErrInvalid)
		_, err = s.Get(ctx, chatID, []string{""})
		require.ErrorIs(t, err, msgstore.ErrInvalid)
	})

	t.Run("CanceledContextIsNotUnavailable", func(t *testing.T) {
		s := open(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.Put(cctx, NewChatID(t), []chat.Message{TextMessage("m", "x")})
		require.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, msgstore.ErrUnavailable, "the caller gave up; the store did not fail")
	})

	t.Run("ConcurrentPuts", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		const workers, perWorker, batch = 8, 60, 10
		shared := []chat.Message{TextMessage("shared-1", "same for all"), TextMessage("shared-2", "same for all")}
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker)
		for w := range workers {
			wg.Go(func() {
				for i := 0; i < perWorker; i += batch {
					var msgs []chat.Message
					for j := i; j < i+batch; j++ {
						msgs = append(msgs, TextMessage(fmt.Sprintf("w%d-%03d", w, j), fmt.Sprintf("worker %d message %d", w, j)))
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
		assert.Equal(t, want, IDs(got))
		assert.Equal(t, "worker 7 message 59", got[7*perWorker+59].Text())
	})

	t.Run("TenThousandMessages", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		const total, batch = 10_000, 500
		all := make([]chat.Message, total)
		for i := range all {
			all[i] = TextMessage(fmt.Sprintf("m%05d", i), fmt.Sprintf("message number %d", i))
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
		chatID := NewChatID(t)
		require.NoError(t, s.Put(ctx, chatID, []chat.Message{TextMessage("m", "x")}))
		require.NoError(t, s.Close())
		require.NoError(t, s.Close(), "closing twice is a no-op")
		err := s.Put(ctx, chatID, []chat.Message{TextMessage("m2", "y")})
		require.ErrorIs(t, err, msgstore.ErrClosed)
		_, err = s.Get(ctx, chatID, []string{"m"})
		require.ErrorIs(t, err, msgstore.ErrClosed)
		assert.False(t, errors.Is(err, msgstore.ErrUnavailable), "a closed store is not worth retrying")
	})
}
