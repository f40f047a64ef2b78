package workflows

import (
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// boundMessages returns a copy of msgs for an update's result: the messages that would
// take it past wire.HistoryPageBytes encoded are returned as references (no contents), which
// History returns whole. The first message is always whole.
func boundMessages(msgs []chat.Message) []chat.Message {
	out := append([]chat.Message{}, msgs...)
	size := 0
	for i := range out {
		n := wire.MessageBytes(out[i])
		if i > 0 && size+n > wire.HistoryPageBytes {
			out[i].Contents = nil
			n = wire.StubBytes(out[i])
		}
		size += n
	}
	return out
}
