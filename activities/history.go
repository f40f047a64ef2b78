package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// historyFor returns the history an agent call sees: the inline history, or the run's
// first HistoryLength messages read through its History query (the committed prefix
// from this worker's cache when it has it) and reduced; stubs are filled from the
// message store. It heartbeats while it waits: the query (which a worker without the
// chat cached answers by replaying it) and the store can take seconds on a loaded
// machine, and a call that missed its heartbeat there would miss it again on every
// attempt.
func (m *models) historyFor(ctx context.Context, in wire.InvokeInput) ([]chat.Message, error) {
	stop := heartbeatWhileWaiting(ctx)
	defer stop()
	if in.HistoryLength == 0 {
		return m.stores.fillStubs(ctx, in.ChatID, in.Store, in.History)
	}
	msgs, err := m.readRun(ctx, in)
	if err != nil {
		return nil, err
	}
	var view []chat.Message
	if in.HistoryFrom > 0 {
		view = msgs[min(in.HistoryFrom-in.Base, len(msgs)):] // what a service thread has not seen
	} else {
		view = in.Reducer.ReduceWith(msgs, in.ChannelState)
	}
	filled, err := m.stores.fillStubs(ctx, in.ChatID, in.Store, view)
	if err != nil {
		return nil, err
	}
	if len(view) == len(msgs) {
		// The whole history was filled: keep the bodies, so the next call reads none again.
		m.runs.put(in.ChatID, in.RunID, filled[:min(in.Committed, len(filled))])
	}
	return filled, nil
}

// readRun reads messages [in.Base, length) of a chat run (what the run holds: older
// ones are in pages), reusing the cached committed prefix. With the cached prefix as
// long as in.DeltaFrom, the delta completes it and no query is made (the usual case:
// the same worker made the chat's previous call). Indexes into what it returns and
// caches are relative to in.Base.
func (m *models) readRun(ctx context.Context, in wire.InvokeInput) ([]chat.Message, error) {
	chatID, runID, base := in.ChatID, in.RunID, in.Base
	length, committed, deltaFrom := in.HistoryLength-base, max(in.Committed-base, 0), max(in.DeltaFrom-base, 0)
	cached := m.runs.get(chatID, runID)
	if in.Delta != nil && len(cached) >= deltaFrom && deltaFrom+len(in.Delta) == length {
		msgs := append(append(make([]chat.Message, 0, length), cached[:deltaFrom]...), in.Delta...)
		m.runs.put(chatID, runID, msgs[:min(committed, len(msgs))])
		return msgs, nil
	}
	if len(cached) > committed {
		cached = cached[:committed]
	}
	msgs := append(make([]chat.Message, 0, length), cached...)
	tc, err := m.clients.temporal(activity.GetInfo(ctx).WorkflowNamespace)
	if err != nil {
		return nil, err
	}
	more, err := transfer.ReadHistory(ctx, tc, chatID, runID, base+len(msgs), base+length, m.stores.readPages)
	if err != nil {
		return nil, err
	}
	msgs = append(msgs, more...)
	m.runs.put(chatID, runID, msgs[:min(committed, len(msgs))])
	return msgs, nil
}

// fillStubs replaces stub messages (no contents) by their bodies from the chat's store.
func (s *stores) fillStubs(ctx context.Context, chatID, store string, msgs []chat.Message) ([]chat.Message, error) {
	if !slices.ContainsFunc(msgs, transfer.IsStub) {
		return msgs, nil
	}
	st, err := s.messageStore(store)
	if err != nil {
		return nil, err
	}
	out, err := transfer.FillStubs(ctx, st, chatID, msgs)
	if err != nil {
		return nil, storeError(err)
	}
	return out, nil
}

// StoreMessages implements Activities.StoreMessages.
func (s *stores) StoreMessages(ctx context.Context, in wire.StoreMessagesInput) (wire.StoreMessagesResult, error) {
	st, err := s.messageStore(in.Store)
	if err != nil {
		return wire.StoreMessagesResult{}, err
	}
	bodies := make([]chat.Message, len(in.Messages))
	for i, m := range in.Messages {
		bodies[i] = chat.Message{MessageID: m.MessageID, Role: m.Role, AgentID: m.AgentID, Contents: m.Contents}
	}
	if err := st.Put(ctx, in.ChatID, bodies); err != nil {
		return wire.StoreMessagesResult{}, storeError(err)
	}
	return wire.StoreMessagesResult{Store: st.Name()}, nil
}

// messageStore returns the store named name, or the default store for "".
func (s *stores) messageStore(name string) (msgstore.Store, error) {
	if name == "" {
		name = s.defaultStore
	}
	st, ok := s.byName[name]
	if !ok || st == nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"message store %q is not configured on this worker (worker --message-store URL)", name),
			wire.ErrTypeInvalidInput, nil)
	}
	return st, nil
}

// storeError marks store failures: unreachable is retryable (StoreUnavailable), the
// rest is not: an id held with another body (StoreConflict), not found and the others
// (InvalidInput).
// The message names the store once: the store's own errors already start with
// "msgstore:" and name ErrUnavailable.
func storeError(err error) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, "msgstore:") && !strings.HasPrefix(msg, "message store") {
		msg = "message store: " + msg
	}
	if errors.Is(err, msgstore.ErrUnavailable) {
		if !strings.Contains(msg, msgstore.ErrUnavailable.Error()) {
			msg = msgstore.ErrUnavailable.Error() + ": " + msg
		}
		return temporal.NewApplicationError(msg, wire.ErrTypeStoreUnavailable)
	}
	if errors.Is(err, msgstore.ErrConflict) {
		return temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeStoreConflict, nil)
	}
	return temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeInvalidInput, nil)
}

// runCache keeps the committed history prefix of recent chat runs, so that a long chat's
// model calls read only the messages added since this worker's last call.
type runCache struct {
	mu      sync.Mutex
	entries map[[2]string][]chat.Message
	order   [][2]string
	max     int
}

func newRunCache(max int) *runCache {
	return &runCache{entries: map[[2]string][]chat.Message{}, max: max}
}

func (c *runCache) get(chatID, runID string) []chat.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[[2]string{chatID, runID}]
}

func (c *runCache) put(chatID, runID string, msgs []chat.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]string{chatID, runID}
	if _, ok := c.entries[key]; !ok {
		c.order = append(c.order, key)
		if len(c.order) > c.max {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.entries[key] = msgs
}
