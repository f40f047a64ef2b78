package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// send prints the streamed reply as --no-stream prints the answer; follow --json prints
// the chat's events from an offset, one JSON line each; stop without a turn in flight
// says so.
func TestSendStreamsFollowPrintsEventsStopRefuses(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	streamed := ok(t, h, "send", "--chat", id, "--id", "t1", "Hello")
	whole := ok(t, h, "send", "--chat", id, "--id", "t1", "--no-stream", "Hello") // the same turn again: its answer
	assert.Equal(t, whole.out, streamed.out, "streamed, the reply prints as it does whole")
	assert.True(t, strings.HasPrefix(streamed.out, "Helper: [offline] helper received 2 messages."), streamed.out)

	line := fails(t, h, "stop", "--chat", id)
	assert.Contains(t, line, "no turn is in flight")

	// The chat's events from offset 2, until --timeout ends the command (a live chat's
	// stream does not end).
	r := starter(t, h, "", "--timeout", "3s", "follow", "--chat", id, "--from", "2", "--json")
	assert.Equal(t, 1, r.code, "%v", r)
	var types []string
	for _, l := range r.lines() {
		var ev struct {
			Offset int64  `json:"offset"`
			Type   string `json:"type"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		if ev.Type == wire.EventTextDelta && len(types) > 0 && types[len(types)-1] == ev.Type {
			continue // the reply's text may come in one delta or several
		}
		types = append(types, ev.Type)
		assert.GreaterOrEqual(t, ev.Offset, int64(2))
	}
	assert.Equal(t, []string{wire.EventTextDelta, wire.EventMessageDone, wire.EventTurnDone}, types)
}
