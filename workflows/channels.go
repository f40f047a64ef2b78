package workflows

import (
	"encoding/json"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chatstate"
)

// channel is one channel of the chat: how an agent kind sees the primary history
// (DESIGN.md). State holds only what the primary history cannot give: for a
// chat_history channel without a reducer, nothing ({}).
type channel struct {
	key, typ string
	state    json.RawMessage
}

// strategyState is the selection and termination state at one moment.
type strategyState struct {
	sel  agents.SelectionState
	term agents.TerminationState
}

var emptyState = json.RawMessage(`{}`)

// openChannel gives participant p its channel: the existing one with p's key (a
// dormant channel kept from an import resumes with its state), else a new one, which
// for a chat_history channel is synchronized from the primary history by construction.
func (s *chatState) openChannel(p agents.Participant) {
	for _, c := range s.channels {
		if c.key == p.ChannelKey {
			return
		}
	}
	s.channels = append(s.channels, &channel{key: p.ChannelKey, typ: p.ChannelType, state: emptyState})
}

// channelActive reports whether a participant uses c.
func (s *chatState) channelActive(c *channel) bool {
	for _, p := range s.participants {
		if p.ChannelKey == c.key {
			return true
		}
	}
	return false
}

// documentChannels returns every channel, active or dormant, as the document holds them.
func (s *chatState) documentChannels() []chatstate.Channel {
	out := make([]chatstate.Channel, 0, len(s.channels))
	for _, c := range s.channels {
		out = append(out, chatstate.Channel{ChannelKey: c.key, ChannelType: c.typ, ChannelState: c.state})
	}
	return out
}

// adoptChannels takes the channels of a restored document: a participant's channel
// whose key the document has takes its state (equivalent); a participant's channel the
// document lacks stays new (enhanced); a document channel no participant uses is kept
// dormant, so its agent resumes it on rejoining (reduced).
func (s *chatState) adoptChannels(doc []chatstate.Channel) {
	for _, dc := range doc {
		state := dc.ChannelState
		if len(state) == 0 {
			state = emptyState
		}
		found := false
		for _, c := range s.channels {
			if c.key == dc.ChannelKey {
				c.state, found = state, true
			}
		}
		if !found {
			s.channels = append(s.channels, &channel{key: dc.ChannelKey, typ: dc.ChannelType, state: state})
		}
	}
}
