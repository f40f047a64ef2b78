package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/agents"
)

func (s *chatState) validateAddParticipants(in AddParticipantsInput) error {
	if len(in.AgentIDs) == 0 {
		return temporal.NewApplicationError("agentIds is empty", agents.ErrTypeInvalidInput)
	}
	for _, id := range in.AgentIDs {
		if slices.Contains(s.ids(), id) {
			return temporal.NewApplicationError(fmt.Sprintf("agent %q is already a participant", id), agents.ErrTypeInvalidInput)
		}
	}
	if st := s.phase.status(); st != StatusRunning { // running, importing or draining
		return temporal.NewApplicationError(fmt.Sprintf("chat %q is %s", s.chatID, st), agents.ErrTypeNotAcceptingTurns)
	}
	return nil
}

// handleAddParticipants resolves the agents through the registry and appends them to
// the speaking order; an agent whose channel is dormant (kept from an import) resumes
// it. It waits for the turn in flight, so a turn never sees the order change.
func (s *chatState) handleAddParticipants(ctx workflow.Context, in AddParticipantsInput) (StateResult, error) {
	if err := workflow.Await(ctx, func() bool { return s.active == nil }); err != nil {
		return StateResult{}, err
	}
	ps, err := s.resolve(ctx, in.AgentIDs)
	if err != nil {
		return StateResult{}, err
	}
	for _, p := range ps {
		if !slices.Contains(s.ids(), p.ID) {
			s.Participants = append(s.Participants, p)
			s.openChannel(p)
		}
	}
	return s.state(), nil
}
