package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// resolveTimeout bounds one attempt of the activity that looks participants up in the registry.
const resolveTimeout = 10 * time.Second

// AgentChat is the chat workflow. It resolves its participants, then answers queued
// turns one at a time until the termination strategy completes the chat (or, for a
// temporary thread, after its one turn). Handlers: SendMessage and Describe updates,
// UserMessage signal, State and History queries (names.go).
//
// Errors: an input that does not validate (wire.ErrTypeInvalidInput) or an unknown agent id
// (wire.ErrTypeUnknownAgent) fails the workflow at once; callers waiting on updates get the
// same error. A failed turn never fails the workflow.
func AgentChat(ctx workflow.Context, in wire.AgentChatInput) (wire.AgentChatResult, error) {
	s := newChatState(ctx, in)
	s.resumeEarly(ctx)
	if err := s.register(ctx); err != nil {
		return wire.AgentChatResult{}, err
	}
	if err := s.start(ctx); err != nil {
		s.fail(err)
		s.reindex(ctx)
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
		return wire.AgentChatResult{}, err
	}
	if err := s.serve(ctx); err != nil {
		return s.result(), err // cancelled
	}
	s.reindex(ctx)
	if s.migrated() {
		if err := s.forwardLateTurns(ctx); err != nil {
			return s.result(), err
		}
	}
	s.lingerForSubscribers(ctx)
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return s.result(), nil
}

// start validates the input and resolves the participants through the worker's registry.
func (s *chatState) start(ctx workflow.Context) error {
	if err := s.in.Validate(); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), wire.ErrTypeInvalidInput, nil)
	}
	if s.in.Carry != nil { // taken over by resumeEarly
		s.must(s.settle(phaseRunning))
		return nil
	}
	ps, err := s.resolve(ctx, append(append([]string{}, s.in.Participants...), s.in.StrategyAgents()...))
	if err != nil {
		return err
	}
	s.Participants = ps[:len(s.in.Participants)]
	for _, p := range s.Participants {
		s.channels.Open(p)
	}
	s.Selection = s.in.Selection.Initial(s.in.Participants)
	if s.in.Restore != nil {
		if err := s.restore(ctx, *s.in.Restore); err != nil {
			return err
		}
	}
	s.must(s.settle(phaseRunning))
	return nil
}

// handOverDue reports whether the run should continue as new now: due by Temporal's
// suggestion or the budget, the chat running (no import, no migration), not closed and
// not stalled, and no decision waiting to be applied in this run.
func (s *chatState) handOverDue(ctx workflow.Context) bool {
	return s.phase == phaseRunning && s.stalled == nil && !s.closed() && !s.readyToResume() && s.continueAsNewDue(ctx)
}

// serve answers turns in arrival order until the chat closes. It returns an error when
// the workflow is cancelled, and the continue-as-new error when the run hands over.
func (s *chatState) serve(ctx workflow.Context) error {
	for {
		s.reindex(ctx) // after the turn just answered, in the same workflow task
		s.drainSignals(ctx)
		if s.handOverDue(ctx) {
			if err := s.continueAsNew(ctx); err != nil {
				return err
			}
			continue // the hand-over stalled (stall): the chat stays, taking no turns
		}
		if err := workflow.Await(ctx, func() bool {
			return s.signals.Len() > 0 || s.reencryptSignal.Len() > 0 || s.migrated() || s.closed() || s.canTakeTurn() || s.readyToResume() || s.handOverDue(ctx)
		}); err != nil {
			return err
		}
		s.drainSignals(ctx)
		if s.migrated() {
			return nil
		}
		if s.readyToResume() {
			s.resumeSuspended(ctx)
			continue
		}
		if s.handOverDue(ctx) {
			if err := s.continueAsNew(ctx); err != nil {
				return err // the queued turns go with it
			}
			continue
		}
		if s.closed() {
			s.refuseQueued()
			s.must(s.settle(phaseCompleted)) // under a migration, if one is under way
			return nil
		}
		if !s.canTakeTurn() {
			continue // woken by a signal that only queued a turn
		}
		s.runTurn(ctx, s.turnQueue.Next())
	}
}

func (s *chatState) result() wire.AgentChatResult {
	r := wire.AgentChatResult{Status: s.phase.status(), IsComplete: s.IsComplete,
		MessageCount: s.history.Len(), TurnCount: s.TurnCount}
	if s.migrated() {
		r.Migration = s.transfers.MigrationResult()
	}
	return r
}

// resolve looks agent ids up in the worker's registry: a local activity on the worker
// that runs the workflow task, in the same task (no round trip through the server),
// and when that worker does not know an agent or function, activities on the task
// queue's other workers (tryElsewhere).
func (s *chatState) resolve(ctx workflow.Context, ids []string) ([]wire.Participant, error) {
	var res wire.ResolveResult
	in := wire.ResolveInput{AgentIDs: ids}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: resolveTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: resolveTimeout,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3},
	})
	err := workflow.ExecuteLocalActivity(lctx, wire.ResolveParticipantsActivity, in).Get(ctx, &res)
	if err = s.tryElsewhere(actx, wire.ResolveParticipantsActivity, in, &res, err); err != nil {
		return nil, unwrapActivityError(err)
	}
	return res.Participants, nil
}
