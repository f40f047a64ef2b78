package workflows

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/wire"
)

// A participant has one channel, found by its key; a channel is never removed, and a
// dormant one resumes with its state when its agent joins again.
func TestChannelSetKeepsOneChannelPerKeyAndDormantOnes(t *testing.T) {
	writer := wire.Participant{ID: "writer", ChannelKey: "k-writer", ChannelType: wire.ChannelResponsesThread}
	helper := wire.Participant{ID: "helper", ChannelKey: "k-helper", ChannelType: "chat_history"}
	var cs channelSet
	cs.Open(writer)
	cs.Open(helper)
	cs.Of(writer).SetState(json.RawMessage(`{"previousResponseId":"r1"}`))
	cs.Open(writer)
	require.Len(t, cs.Document(), 2, "opened again, the writer keeps its channel")
	assert.JSONEq(t, `{"previousResponseId":"r1"}`, string(cs.Of(writer).State()))
	assert.JSONEq(t, `{}`, string(cs.Of(helper).State()), "a new channel's state is {}")
	assert.Nil(t, cs.Of(wire.Participant{ChannelKey: "k-none"}))

	info := cs.Info([]wire.Participant{helper})
	require.Len(t, info, 2, "the writer's channel stays, dormant")
	assert.Equal(t, "k-writer", info[0].ChannelKey, "in order of creation")
	assert.False(t, info[0].Active)
	assert.True(t, info[1].Active)
	assert.Nil(t, (&channelSet{}).Info(nil), "no channel: none reported")
}

// A document's channels: a participant's channel it has takes its state (equivalent),
// one it lacks stays new (enhanced), one no participant uses is kept dormant (reduced);
// an empty state is {}. The carry hands them over whole and in order.
func TestChannelSetAdoptsADocumentAndCarriesItsChannels(t *testing.T) {
	writer := wire.Participant{ID: "writer", ChannelKey: "k-writer", ChannelType: wire.ChannelResponsesThread}
	helper := wire.Participant{ID: "helper", ChannelKey: "k-helper", ChannelType: "chat_history"}
	var cs channelSet
	cs.Open(writer)
	cs.Open(helper)
	cs.Adopt([]chatstate.Channel{
		{ChannelKey: "k-writer", ChannelType: wire.ChannelResponsesThread, ChannelState: json.RawMessage(`{"previousResponseId":"r9"}`)},
		{ChannelKey: "k-gone", ChannelType: "chat_history"},
	})
	want := []chatstate.Channel{
		{ChannelKey: "k-writer", ChannelType: wire.ChannelResponsesThread, ChannelState: json.RawMessage(`{"previousResponseId":"r9"}`)},
		{ChannelKey: "k-helper", ChannelType: "chat_history", ChannelState: json.RawMessage(`{}`)},
		{ChannelKey: "k-gone", ChannelType: "chat_history", ChannelState: json.RawMessage(`{}`)},
	}
	assert.Equal(t, want, cs.Document())

	next := resumeChannels(cs.Document())
	assert.Equal(t, want, next.Document(), "the next run has the same channels")
	assert.Equal(t, wire.ChannelResponsesThread, next.Of(writer).Type())
}

// Restore puts back the states States captured (a failed turn leaves no trace in a
// service's chain); a channel opened since keeps its own.
func TestChannelSetRestoresCapturedStates(t *testing.T) {
	writer := wire.Participant{ID: "writer", ChannelKey: "k-writer"}
	late := wire.Participant{ID: "late", ChannelKey: "k-late"}
	var cs channelSet
	cs.Open(writer)
	before := cs.States()
	cs.Of(writer).SetState(json.RawMessage(`{"previousResponseId":"r2"}`))
	cs.Open(late)
	cs.Of(late).SetState(json.RawMessage(`{"n":1}`))
	cs.Restore(before)
	assert.JSONEq(t, `{}`, string(cs.Of(writer).State()))
	assert.JSONEq(t, `{"n":1}`, string(cs.Of(late).State()))
}
