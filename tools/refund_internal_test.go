package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/activities"
)

// A refund retried with the same idempotency key (an activity retry after a crash or a
// lost completion) answers the first answer and refunds once; another call refunds again.
func TestRefundDeduplicatesOnTheIdempotencyKey(t *testing.T) {
	keyed := func(chatID, callID string) context.Context {
		return activities.WithToolCall(context.Background(), activities.ToolCall{ChatID: chatID, CallID: callID, Name: "refund"})
	}
	before := refunds.made
	args := json.RawMessage(`{"order":"1002"}`)
	first, err := Refund(keyed("chat-r", "r1"), args)
	require.NoError(t, err)
	again, err := Refund(keyed("chat-r", "r1"), args)
	require.NoError(t, err)
	assert.Equal(t, "refunded $89.00 for order 1002", first)
	assert.Equal(t, first, again, "the retry answers what the first attempt answered")
	assert.Equal(t, 1, refunds.made-before, "one refund for one key")

	_, err = Refund(keyed("chat-r", "r2"), args)
	require.NoError(t, err)
	_, err = Refund(keyed("chat-s", "r1"), args)
	require.NoError(t, err)
	assert.Equal(t, 3, refunds.made-before, "another call, or the same call id in another chat, is another refund")
}

// The ledger remembers the latest maxLedger refunds: one more forgets the oldest.
func TestLedgerKeepsTheLatestRefunds(t *testing.T) {
	l := &ledger{byKey: map[string]string{}}
	key := func(i int) string { return fmt.Sprintf("k%d", i) }
	for i := range maxLedger + 1 {
		l.put(key(i), "r"+key(i))
	}
	assert.Len(t, l.byKey, maxLedger)
	assert.Len(t, l.order, maxLedger)
	_, ok := l.get(key(0))
	assert.False(t, ok, "the oldest is forgotten")
	for _, i := range []int{1, maxLedger} {
		res, ok := l.get(key(i))
		assert.True(t, ok, "%s is kept", key(i))
		assert.Equal(t, "r"+key(i), res)
	}
}
