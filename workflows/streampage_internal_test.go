package workflows

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/wire"
)

// A poll's or StreamRead's page holds at most wire.StreamPollBytes of items (data and
// topic lengths): exactly at the limit, everything; one byte over, the last item goes
// to the next page (NextOffset, MoreReady); an item larger than the limit alone is
// still a page of its own.
func TestStreamPageAtItsLimitAndJustOver(t *testing.T) {
	topic := wire.StreamTopic
	log := func(sizes ...int) *eventLog {
		l := &eventLog{base: 1, next: 1}
		for _, n := range sizes {
			l.items = append(l.items, wire.StreamItem{Topic: topic, Data: strings.Repeat("A", n-len(topic)), Offset: l.next})
			l.next++
		}
		return l
	}
	half := wire.StreamPollBytes / 2

	at := log(half, wire.StreamPollBytes-half).Page(1, nil)
	assert.Len(t, at.Items, 2, "exactly at the limit: one page")
	assert.False(t, at.MoreReady)
	assert.Equal(t, int64(3), at.NextOffset)

	over := log(half, wire.StreamPollBytes-half+1)
	first := over.Page(1, nil)
	assert.Len(t, first.Items, 1, "one byte over: the second item waits")
	assert.True(t, first.MoreReady)
	assert.Equal(t, int64(2), first.NextOffset)
	rest := over.Page(first.NextOffset, nil)
	assert.Len(t, rest.Items, 1)
	assert.False(t, rest.MoreReady)
	assert.Equal(t, int64(3), rest.NextOffset)

	big := log(wire.StreamPollBytes+1, 10).Page(1, nil)
	assert.Len(t, big.Items, 1, "an item over the limit is a page alone")
	assert.True(t, big.MoreReady)
}
