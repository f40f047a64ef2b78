package msgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
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

// An index page's body is the documented JSON, decodes to itself, and what is not one
// (another version, level 0, no references, references that are not consecutive pages
// of the level below from its first message) is ErrPageMismatch saying what.
func TestIndexBody(t *testing.T) {
	b := msgstore.IndexBody{ChatID: "c", Lineage: "L", Level: 1, Seq: 2, First: 8, Refs: []msgstore.IndexEntry{
		{Seq: 4, First: 8, Count: 4, Bytes: 100, Digest: "sha256:aa"}, {Seq: 5, First: 12, Count: 3, Bytes: 90, Digest: "sha256:bb"}}}
	enc, err := msgstore.EncodeIndexBody(b)
	require.NoError(t, err)
	assert.Equal(t, `{"v":1,"chatId":"c","lineage":"L","level":1,"seq":2,"first":8,"refs":[{"seq":4,"first":8,"count":4,"bytes":100,"digest":"sha256:aa"},{"seq":5,"first":12,"count":3,"bytes":90,"digest":"sha256:bb"}]}`, string(enc))
	got, err := msgstore.DecodeIndexBody(enc)
	require.NoError(t, err)
	assert.Equal(t, b, got)
	assert.EqualValues(t, 7, got.Count())

	_, err = msgstore.EncodeIndexBody(msgstore.IndexBody{Level: 0, Refs: b.Refs})
	assert.Error(t, err, "level 0 is not an index page")
	_, err = msgstore.EncodeIndexBody(msgstore.IndexBody{Level: 1})
	assert.Error(t, err, "an index page lists at least one page")

	for body, want := range map[string]string{
		`{"v":2,"level":1,"refs":[{"seq":0,"first":0,"count":1}]}`:                                 "version",
		`{"v":1,"level":0,"refs":[{"seq":0,"first":0,"count":1}]}`:                                 "a level 0 page",
		`{"v":1,"level":1,"refs":[]}`:                                                              "0 references",
		`{"v":1,"level":1,"first":0,"refs":[{"seq":0,"first":1,"count":1}]}`:                       "reference 0",
		`{"v":1,"level":1,"first":0,"refs":[{"seq":0,"first":0,"count":2},{"first":3,"count":1}]}`: "reference 1",
		`{"v":1,"level":2,"first":0,"refs":[{"seq":0,"first":0,"count":2}]}`:                       "consecutive level 1 pages",
		`{"v":1,"level":1,"first":0,"refs":[{"seq":0,"first":0,"count":0}]}`:                       "reference 0",
		`not json`: "not an index page",
	} {
		_, err := msgstore.DecodeIndexBody([]byte(body))
		require.ErrorIs(t, err, msgstore.ErrPageMismatch, body)
		assert.Contains(t, err.Error(), want, body)
	}
	_, err = msgstore.DecodePageBody(enc)
	assert.ErrorContains(t, err, "a level 1 page where a level 0 page was expected", "a level-0 reader refuses an index page")
}

// EncodePageBodyFrom writes the canonical forms it is given where EncodePageBody would
// have encoded the same messages, and encodes the others (nil entries, stubs, a raw
// shorter than the messages): the bodies are byte for byte the same.
func TestEncodePageBodyFromWritesWhatEncodePageBodyWrites(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	msgs := []chat.Message{
		{MessageID: "m1", Role: chat.RoleUser, AuthorName: "Ann", CreatedAt: at, Contents: []chat.Content{chat.Text("hej \u2028 \"✓\"")}},
		{MessageID: "m1/1", Role: chat.RoleAssistant, AgentID: "a", CreatedAt: at}, // a stub: encoded, never given
		{MessageID: "m1/2", Role: chat.RoleAssistant, AgentID: "a", CreatedAt: at, Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "f", Arguments: `{"x":1}`}}},
		{MessageID: "m1/3", Role: chat.RoleTool, CreatedAt: at, Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c1", Result: "ok"}}},
	}
	b := msgstore.PageBody{ChatID: "c", Lineage: "L", Seq: 2, First: 40, Messages: msgs}
	want, err := msgstore.EncodePageBody(b)
	require.NoError(t, err)
	raw := make([][]byte, len(msgs))
	for i, m := range msgs {
		if m.Contents != nil {
			raw[i], err = chatstate.EncodeMessage(m)
			require.NoError(t, err)
		}
	}
	for name, r := range map[string][][]byte{"all": raw, "some": {nil, nil, raw[2]}, "none": nil, "first only": raw[:1]} {
		got, err := msgstore.EncodePageBodyFrom(b, r)
		require.NoError(t, err, name)
		assert.Equal(t, string(want), string(got), name)
	}
	back, err := msgstore.DecodePageBody(want)
	require.NoError(t, err)
	assert.Equal(t, msgs[2], back.Messages[2])
}
