package workflows

import (
	"encoding/json"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// channelSet is the chat's channels, in order of creation: how each agent kind sees
// the primary history (DESIGN.md). It owns them: no other code adds a channel or reads
// or writes one's state but through these methods, so that its rules live here:
//
//   - a participant has at most one channel, the one with its ChannelKey (Of);
//   - a channel is never removed: one whose key no participant has is dormant (kept
//     from an import) and resumes with its state when its agent joins (Open, Adopt);
//   - a new channel's state is {} (emptyState), and so is a document's empty one.
//
// The carry and a document hold the channels in the same form and order (Document).
type channelSet struct {
	list []*channel
}

// channel is one channel of the chat. State holds only what the primary history cannot
// give: for a chat_history channel without a reducer, nothing ({}).
type channel struct {
	key, typ string
	state    json.RawMessage
}

// resumeChannels returns the channels a previous run carried, in their order.
func resumeChannels(carried []chatstate.Channel) channelSet {
	var cs channelSet
	for _, ch := range carried {
		cs.list = append(cs.list, &channel{key: ch.ChannelKey, typ: ch.ChannelType, state: ch.ChannelState})
	}
	return cs
}

// Type is the channel's type (wire.ChannelChatHistory, ...).
func (c *channel) Type() string { return c.typ }

// State is the channel's state, as its agent kind reads it.
func (c *channel) State() json.RawMessage { return c.state }

// SetState replaces the channel's state.
func (c *channel) SetState(st json.RawMessage) { c.state = st }

// Of returns participant p's channel, nil when it has none.
func (cs *channelSet) Of(p wire.Participant) *channel {
	for _, c := range cs.list {
		if c.key == p.ChannelKey {
			return c
		}
	}
	return nil
}

// channelStates is every channel's state at one moment, by key (States): a list, as a
// chat has a few channels and a turn keeps one of these for its whole run.
type channelStates []channelState

type channelState struct {
	key   string
	state json.RawMessage
}

// Of returns the state of the channel with key, if it was there.
func (cs channelStates) Of(key string) (json.RawMessage, bool) {
	for _, c := range cs {
		if c.key == key {
			return c.state, true
		}
	}
	return nil, false
}

// States returns every channel's state, for Restore.
func (cs *channelSet) States() channelStates {
	states := make(channelStates, 0, len(cs.list))
	for _, c := range cs.list {
		states = append(states, channelState{key: c.key, state: c.state})
	}
	return states
}

// Restore puts back the channels' states captured by States: a turn that failed
// leaves no trace in a service's chain either (its responses become an unused branch).
// A channel opened since keeps its state.
func (cs *channelSet) Restore(states channelStates) {
	for _, c := range cs.list {
		if st, ok := states.Of(c.key); ok {
			c.state = st
		}
	}
}

var emptyState = json.RawMessage(`{}`)

// Open gives participant p its channel: the existing one with p's key (a dormant
// channel kept from an import resumes with its state), else a new one, which for a
// chat_history channel is synchronized from the primary history by construction.
func (cs *channelSet) Open(p wire.Participant) {
	if cs.Of(p) != nil {
		return
	}
	cs.list = append(cs.list, &channel{key: p.ChannelKey, typ: p.ChannelType, state: emptyState})
}

// Info returns every channel as State reports it, Active when one of participants uses
// it; nil when there is none.
func (cs *channelSet) Info(participants []wire.Participant) []wire.ChannelInfo {
	var out []wire.ChannelInfo
	for _, c := range cs.list {
		active := slices.ContainsFunc(participants, func(p wire.Participant) bool { return p.ChannelKey == c.key })
		out = append(out, wire.ChannelInfo{ChannelKey: c.key, ChannelType: c.typ, Active: active, ChannelState: c.state})
	}
	return out
}

// Document returns every channel, active or dormant, as the document and the carry
// hold them.
func (cs *channelSet) Document() []chatstate.Channel {
	out := make([]chatstate.Channel, 0, len(cs.list))
	for _, c := range cs.list {
		out = append(out, chatstate.Channel{ChannelKey: c.key, ChannelType: c.typ, ChannelState: c.state})
	}
	return out
}

// Adopt takes the channels of a restored document: a participant's channel whose key
// the document has takes its state (equivalent); a participant's channel the document
// lacks stays new (enhanced); a document channel no participant uses is kept dormant,
// so its agent resumes it on rejoining (reduced).
func (cs *channelSet) Adopt(doc []chatstate.Channel) {
	for _, dc := range doc {
		state := dc.ChannelState
		if len(state) == 0 {
			state = emptyState
		}
		found := false
		for _, c := range cs.list {
			if c.key == dc.ChannelKey {
				c.state, found = state, true
			}
		}
		if !found {
			cs.list = append(cs.list, &channel{key: dc.ChannelKey, typ: dc.ChannelType, state: state})
		}
	}
}

// strategyState is the selection and termination state, and the channels' states, at
// one moment: what a failed turn goes back to.
type strategyState struct {
	sel      strategies.SelectionState
	term     strategies.TerminationState
	channels channelStates
}

// strategiesNow captures the strategies' and channels' state.
func (s *chatState) strategiesNow() strategyState {
	return strategyState{sel: s.Selection, term: s.Termination, channels: s.channels.States()}
}

// summarizeIfDue folds older messages into agent p's summary when its summarizing
// reducer says one is due, before p's model call; the summary and where it ends are
// the channel's state.
func (s *chatState) summarizeIfDue(ctx workflow.Context, p wire.Participant, t *turn) error {
	ch := s.channels.Of(p)
	if ch == nil {
		return nil
	}
	from, to, due := p.Reducer.ToSummarize(s.history.Window(), ch.State())
	if !due {
		return nil
	}
	from, to = from+s.history.Base(), to+s.history.Base() // indexes in the window
	prev := strategies.ParseSummaryState(ch.State())
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
	ch.SetState(mustJSON(strategies.SummaryState{Summary: res.Summary, SummarizedThrough: through.MessageID}))
	return nil
}
