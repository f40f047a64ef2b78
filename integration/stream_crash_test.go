package integration_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// A worker SIGKILLed while its model call streams: the call is retried on the other
// worker once its heartbeats stop, the subscriber sees retry (drop the deltas so far),
// then the whole reply once; its deltas concatenate to the final text, and a
// subscriber that resumes from an offset mid-stream misses nothing and sees nothing
// twice.
func TestStreamWorkerKilledMidStream(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("word ", 200))
	model, err := offline.Start(offline.Options{ChunkDelay: 50 * time.Millisecond, Scripts: map[string][]offline.Reply{"helper": {
		{Text: long},
	}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q}
agents:
  - {id: helper, name: Helper, model: offline, endpoint: local, call: {heartbeatTimeout: 2s, initialInterval: 100ms}}
`, model.URL())
	c, id, first, opts := crashChat(t, config)

	type got struct {
		ev  agentchat.Event
		err error
	}
	events := make(chan got, 1000)
	go func() {
		defer close(events)
		for ev, err := range c.SendStream(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t1", Text: "Tell me a long story"}) {
			events <- got{ev, err}
		}
	}()
	var seen []agentchat.Event
	deltas := 0
	for deltas < 3 {
		g, ok := <-events
		require.True(t, ok, "the stream ended before the third delta")
		require.NoError(t, g.err)
		seen = append(seen, g.ev)
		if g.ev.Type == wire.EventTextDelta {
			deltas++
		}
	}
	testenv.StartWorkerProcess(t, opts) // the worker that takes over
	first.Kill()
	for g := range events {
		require.NoError(t, g.err)
		seen = append(seen, g.ev)
	}
	types := eventTypes(seen)
	assert.Contains(t, types, wire.EventRetry, "%v", types)
	done := 0
	for _, ev := range seen {
		if ev.Type == wire.EventMessageDone {
			done++
		}
	}
	assert.Equal(t, 1, done, "the reply is done once")
	assert.Equal(t, wire.EventTurnDone, types[len(types)-1])
	h := &testenv.Harness{Client: c}
	assertStreamMatchesHistory(t, h, id, seen)
	texts, _ := streamedTexts(seen)
	assert.Equal(t, "[offline] helper: "+long, texts["t1/1"])

	// A subscriber that resumes after the first deltas, at the offset after the last one
	// it saw, gets the rest: together, the events once each.
	cut := 0
	for i, ev := range seen {
		if ev.Type == wire.EventTextDelta {
			cut = i + 1
			break
		}
	}
	var rest []agentchat.Event
	for ev, err := range c.Follow(ctxFor(t), id, seen[cut-1].Offset+1) {
		require.NoError(t, err)
		rest = append(rest, ev)
		if ev.Type == wire.EventTurnDone {
			break
		}
	}
	assert.Equal(t, seen[cut:], rest)
}
