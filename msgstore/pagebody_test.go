package msgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
)

// A page body reads back as written, stubs (no contents) staying stubs, and the same
// page encodes to the same bytes (a retried write is a no-op).
func TestPageBodyRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	b := msgstore.PageBody{ChatID: "c\"1", Lineage: "run-1", Seq: 3, First: 12, Messages: []chat.Message{
		{MessageID: "m1", Role: chat.RoleUser, CreatedAt: at, Contents: []chat.Content{chat.Text("hej \u2028 ✓")}},
		{MessageID: "m1/1", Role: chat.RoleAssistant, AgentID: "a", AuthorName: "A", CreatedAt: at}, // a stub
	}}
	enc, err := msgstore.EncodePageBody(b)
	require.NoError(t, err)
	again, err := msgstore.EncodePageBody(b)
	require.NoError(t, err)
	assert.Equal(t, enc, again)
	assert.Contains(t, string(enc), `{"v":1,"chatId":"c\"1","lineage":"run-1","level":0,"seq":3,"first":12,"messages":[`)
	got, err := msgstore.DecodePageBody(enc)
	require.NoError(t, err)
	assert.Equal(t, b, got)
	assert.Nil(t, got.Messages[1].Contents, "a stub stays a stub")
}

// What is not a version 1 level 0 page is ErrPageMismatch, saying what it is.
func TestPageBodyRefusesOtherShapes(t *testing.T) {
	for body, want := range map[string]string{
		`not json`:                        "not a page",
		`{"v":2,"messages":[]}`:           "version",
		`{"messages":[]}`:                 "version",
		`{"v":1,"level":1,"refs":[]}`:     "level 1",
		`{"v":1,"messages":[{"role":7}]}`: "message 0",
	} {
		_, err := msgstore.DecodePageBody([]byte(body))
		require.ErrorIs(t, err, msgstore.ErrPageMismatch, body)
		assert.Contains(t, err.Error(), want, body)
	}
}
