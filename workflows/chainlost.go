package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/agents"
)

// versionResyncLostChain: a Responses chain the service no longer knows is dropped and
// the agent sent the primary history again; before, the turn failed (and every later one).
const versionResyncLostChain = "resync-lost-response-chain"

// dropLostChain handles a model call of agent p that failed with err: when the
// Responses API no longer knows the channel's previous_response_id (agents.ErrTypeChainLost:
// another project, past its retention), the channel's chain is dropped, the lost
// response recorded in its state (agents.LostChainState), and it reports true: the call
// is made again, once, as for a new channel, with the whole primary history the chat
// holds. A turn that fails later puts the old state back, like any failed turn, and the
// next call drops the chain again.
func (s *chatState) dropLostChain(ctx workflow.Context, p agents.Participant, err error) bool {
	if errorType(err) != agents.ErrTypeChainLost || p.Kind != agents.KindResponses {
		return false
	}
	ch := s.channelOf(p)
	if ch == nil || !changed(ctx, versionResyncLostChain) {
		return false
	}
	var st agents.ResponsesThreadState
	_ = agents.DecodeChannelState(ch.state, &st) // the activity read it: it decodes
	workflow.GetLogger(ctx).Warn("the service no longer knows this agent's response chain; sending it the chat's history again",
		"agent", p.ID, "lostResponseId", st.PreviousResponseID)
	ch.state = agents.LostChainState(st.PreviousResponseID)
	return true
}
