package wire_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/wire"
)

// A chat's window and page sizes are checked at their edges: a window of 8 and pages of
// 4 to 256 are taken, one less or one more is refused naming the field; zero is the
// default.
func TestHistoryWindowAtItsEdges(t *testing.T) {
	for _, ok := range []wire.HistoryWindow{{}, {WindowMessages: 8}, {PageMessages: 4}, {PageMessages: wire.PageMessages}, {WindowMessages: 100000}, {IndexFanout: 2}, {IndexFanout: wire.IndexFanout}} {
		require.NoError(t, ok.Validate(), "%+v", ok)
	}
	for w, want := range map[wire.HistoryWindow]string{
		{WindowMessages: 7}:                   "history.windowMessages is 7",
		{WindowMessages: -1}:                  "history.windowMessages is -1",
		{PageMessages: 3}:                     "history.pageMessages is 3",
		{PageMessages: wire.PageMessages + 1}: "history.pageMessages is 257",
		{IndexFanout: 1}:                      "history.indexFanout is 1",
		{IndexFanout: wire.IndexFanout + 1}:   "history.indexFanout is 513",
	} {
		err := w.Validate()
		require.Error(t, err, "%+v", w)
		assert.Contains(t, err.Error(), want)
	}
	in := wire.AgentChatInput{Participants: []string{"helper"}, History: &wire.HistoryWindow{WindowMessages: 7}}
	assert.ErrorContains(t, in.Validate(), "history.windowMessages", "a chat's input is checked with it")
	window, page := (*wire.HistoryWindow)(nil).Effective()
	assert.Equal(t, [2]int{wire.WindowMessages, wire.PageMessages}, [2]int{window, page})
	assert.Equal(t, wire.IndexFanout, (*wire.HistoryWindow)(nil).Fanout())
	assert.Equal(t, 3, (&wire.HistoryWindow{IndexFanout: 3}).Fanout())
}
