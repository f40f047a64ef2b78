package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

func (s *chatState) validateAddParticipants(in wire.AddParticipantsInput) error {
	if len(in.AgentIDs) == 0 {
		return temporal.NewApplicationError("agentIds is empty", wire.ErrTypeInvalidInput)
	}
	for _, id := range in.AgentIDs {
		if slices.Contains(s.ids(), id) {
			return temporal.NewApplicationError(fmt.Sprintf("agent %q is already a participant", id), wire.ErrTypeInvalidInput)
		}
	}
	// Running, importing or draining; or a continued run's start, whose carry was taken
	// over before the handlers were registered (the handler waits for the start).
	if s.phase.status() != wire.StatusRunning && !s.continuedStart() {
		return s.notRunning()
	}
	return nil
}

// notRunning is AddParticipants' refusal of a chat that is not running.
func (s *chatState) notRunning() error {
	return temporal.NewApplicationError(fmt.Sprintf("chat %q is %s", s.chatID, s.phase.status()), wire.ErrTypeNotAcceptingTurns)
}

// handleAddParticipants resolves the agents through the registry and appends them to
// the speaking order; an agent whose channel is dormant (kept from an import) resumes
// it. It waits for the turn in flight, so a turn never sees the order change.
func (s *chatState) handleAddParticipants(ctx workflow.Context, in wire.AddParticipantsInput) (wire.StateResult, error) {
	if err := workflow.Await(ctx, func() bool { return s.phase != phaseStarting && s.turnQueue.Active() == nil }); err != nil {
		return wire.StateResult{}, err
	}
	if s.phase.status() != wire.StatusRunning { // a continued run's start failed meanwhile
		return wire.StateResult{}, s.notRunning()
	}
	ps, err := s.resolve(ctx, in.AgentIDs)
	if err != nil {
		return wire.StateResult{}, err
	}
	for _, p := range ps {
		if !slices.Contains(s.ids(), p.ID) {
			s.Participants = append(s.Participants, p)
			s.channels.Open(p)
		}
	}
	s.reindex(ctx)
	return s.state(), nil
}
