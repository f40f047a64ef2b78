package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// dropLostThread handles a model call of agent p that failed with err: when the
// service no longer knows the channel's conversation (wire.ErrTypeThreadLost: a
// Responses previous_response_id or an Assistants thread of another project, or past
// its retention), the channel's state is dropped, what was lost recorded in it
// (wire.LostThreadState), and it reports true: the call is made again, once, as for
// a new channel, with the whole primary history the chat holds. A turn that fails
// later puts the old state back, like any failed turn, and its next call drops it again.
func (s *chatState) dropLostThread(ctx workflow.Context, p wire.Participant, err error) bool {
	if errorType(err) != wire.ErrTypeThreadLost || !p.Kind.ServiceThread() {
		return false
	}
	ch := s.channels.Of(p)
	if ch == nil {
		return false
	}
	workflow.GetLogger(ctx).Warn("the service no longer knows this agent's conversation; sending it the chat's history again",
		"agent", p.ID, "lostState", string(ch.State()))
	ch.SetState(wire.LostThreadState(ch.Type(), ch.State()))
	return true
}
