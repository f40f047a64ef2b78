package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// channel is one channel of the chat: how an agent kind sees the primary history
// (DESIGN.md). State holds only what the primary history cannot give: for a
// chat_history channel without a reducer, nothing ({}).
type channel struct {
	key, typ string
	state    json.RawMessage
}

// strategyState is the selection and termination state, and the channels' states, at
// one moment: what a failed turn goes back to.
type strategyState struct {
	sel      strategies.SelectionState
	term     strategies.TerminationState
	channels map[string]json.RawMessage
}

// strategiesNow captures the strategies' and channels' state.
func (s *chatState) strategiesNow() strategyState {
	st := strategyState{sel: s.Selection, term: s.Termination, channels: map[string]json.RawMessage{}}
	for _, c := range s.channels {
		st.channels[c.key] = c.state
	}
	return st
}

// restoreChannels puts back the channels' states captured by strategiesNow: a turn
// that failed leaves no trace in a service's chain either (its responses become an
// unused branch).
func (s *chatState) restoreChannels(states map[string]json.RawMessage) {
	for _, c := range s.channels {
		if st, ok := states[c.key]; ok {
			c.state = st
		}
	}
}

var emptyState = json.RawMessage(`{}`)

// openChannel gives participant p its channel: the existing one with p's key (a
// dormant channel kept from an import resumes with its state), else a new one, which
// for a chat_history channel is synchronized from the primary history by construction.
func (s *chatState) openChannel(p wire.Participant) {
	for _, c := range s.channels {
		if c.key == p.ChannelKey {
			return
		}
	}
	s.channels = append(s.channels, &channel{key: p.ChannelKey, typ: p.ChannelType, state: emptyState})
}

// channelActive reports whether a participant uses c.
func (s *chatState) channelActive(c *channel) bool {
	for _, p := range s.Participants {
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

// summarizeIfDue folds older messages into agent p's summary when its summarizing
// reducer says one is due, before p's model call; the summary and where it ends are
// the channel's state.
func (s *chatState) summarizeIfDue(ctx workflow.Context, p wire.Participant, t *turn) error {
	ch := s.channelOf(p)
	if ch == nil {
		return nil
	}
	from, to, due := p.Reducer.ToSummarize(s.history.Window(), ch.state)
	if !due {
		return nil
	}
	from, to = from+s.history.Base(), to+s.history.Base() // indexes in the window
	prev := strategies.ParseSummaryState(ch.state)
	in := wire.SummarizeInput{Agent: p.ID, Previous: prev.Summary, History: wire.InvokeInput{
		ChatID: s.chatID, RunID: workflow.GetInfo(ctx).WorkflowExecution.RunID, AgentID: p.ID, TurnID: t.msg.MessageID, Store: s.Store}}
	if part := s.history.Slice(from, to); inlineable(part) {
		in.History.History = part
	} else {
		in.History.HistoryFrom, in.History.HistoryLength, in.History.Committed = from, to, min(to, s.history.IndexOf(t.msg.MessageID))
		in.History.Base = s.history.Base() // the activity reads the window, not the pages
	}
	var res wire.SummarizeResult
	if err := s.agentActivity(workflow.WithActivityOptions(ctx, strategyOptions()), wire.SummarizeActivity, in, &res); err != nil {
		return unwrapActivityError(err)
	}
	through, _ := s.history.At(to - 1)
	ch.state = mustJSON(strategies.SummaryState{Summary: res.Summary, SummarizedThrough: through.MessageID})
	return nil
}
