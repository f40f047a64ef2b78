package workflows

import (
	"errors"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// chatState is the whole state of one chat, with a method per handler.
//
// The embedded Carried is the state that continue-as-new hands to the next run, kept
// here in the form it is carried in: carry copies it by assignment and resume takes it
// over the same way. What a part owns stays nil here (History, Paged, Channels, Stream,
// Restored, Pending, Decisions): resume hands it to its part (history, channels, events,
// transfers, turnQueue, approvals) and carry writes the part's into the copy.
type chatState struct {
	wire.Carried
	chatID string
	// reencrypt: a Reencrypt signal asked for a hand-over (reencrypt.go).
	reencrypt       bool
	reencryptSignal workflow.ReceiveChannel
	in              wire.AgentChatInput
	// phase is where the chat is in its lifecycle (phase.go); failure is why it could
	// not start, in phaseFailed.
	phase   phase
	failure error
	// log returns the workflow's logger, made when something is logged: a logger
	// made ahead (with the workflow's attributes) is about 2 KB that every cached
	// chat would hold.
	log func() log.Logger
	// history is the chat's primary history (history.go); Carried.History stays nil
	// here: resume takes it over and carry writes it into the copy.
	history history
	// channels are the chat's channels (channels.go); Carried.Channels stays nil here.
	channels channelSet
	// boundary is the strategies' state before the active turn: what an export takes and
	// a failed turn goes back to. runTurn and resumeSuspended set it; it is read only
	// while a turn is active.
	boundary strategyState
	// transfers are the chat's exports, imports and migration (transfers.go);
	// Carried.Restored stays nil here.
	transfers transfers
	// approvals are the turn waiting for approvals, if any, and the decisions given
	// (approvals.go); Carried.Decisions stays nil here, as History does.
	approvals approvals
	// stalled is why the chat takes no more turns, when its carry passed CarryLimit
	// because the message store refused its bodies (stall.go); storeErr is the store's
	// last refusal in this run.
	stalled  error
	storeErr error
	// sentCommitted is the committed length of the history at the previous model call
	// of this run (what that call's worker has cached); not carried to the next run.
	sentCommitted int
	signals       workflow.ReceiveChannel
	// publish is the stream's publish signal (stream.go: getPublishing).
	publish workflow.ReceiveChannel

	// turnQueue is the chat's user turns: queued, active, and the idempotency record
	// (queue.go).
	turnQueue turnQueue
	// events is the chat's stream (stream.go).
	events eventLog
}

func newChatState(ctx workflow.Context, in wire.AgentChatInput) *chatState {
	return &chatState{
		chatID:    workflow.GetInfo(ctx).WorkflowExecution.ID,
		in:        in,
		phase:     phaseStarting,
		log:       func() log.Logger { return workflow.GetLogger(ctx) },
		turnQueue: newTurnQueue(),
	}
}

// register sets every handler. It runs before anything can block, so updates and
// signals that arrive with the start are never missed.
func (s *chatState) register(ctx workflow.Context) error {
	// UserMessage signals stay buffered in their channel until the main loop takes them
	// (drainSignals), or a SendMessage update that came after them (takeEarlierSignals;
	// the channel is there before the update handler, which may run at once): a signal
	// is never held by a coroutine that a hand-over or the end of the run could cut short.
	s.signals = workflow.GetSignalChannel(ctx, wire.UserMessageSignal)
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.SendMessageUpdate, s.handleSend,
		workflow.UpdateHandlerOptions{Validator: s.validateSend}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, wire.DescribeUpdate, s.handleDescribe); err != nil {
		return err
	}
	if err := s.registerTransfer(ctx); err != nil {
		return err
	}
	s.registerReencrypt(ctx)
	if err := s.registerStream(ctx); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.CancelTurnUpdate, s.handleCancel,
		workflow.UpdateHandlerOptions{Validator: s.validateCancel}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, wire.StateQuery, func() (wire.StateResult, error) { return s.state(), nil }); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, wire.HistoryQuery, s.page)
}

// failureType is the error type of why the chat could not start (wire.ErrTypeUnknownAgent,
// wire.ErrTypeInvalidInput, ...), which a turn sent to it is refused with too;
// wire.ErrTypeNotAcceptingTurns when err has none.
func failureType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() != "" {
		return app.Type()
	}
	return wire.ErrTypeNotAcceptingTurns
}

// fail records why the chat could not start; waiting handlers return err.
func (s *chatState) fail(err error) {
	s.must(s.to(phaseFailed))
	s.failure = err
	s.turnQueue.Refuse(func(*turn) error { return err })
}

// closed reports whether the chat takes no more turns: its termination strategy
// completed it (and does not reset), or it is a temporary thread that had its turn.
// It is the guard of the move to phaseCompleted (serve); it reads the carried data,
// not the phase, since a chat that closes under a migration still closes.
func (s *chatState) closed() bool {
	return (s.IsComplete && !s.in.Termination.AutoReset) || (s.in.Temporary && s.Attempted > 0)
}

// handleDescribe waits until the chat has started (or failed to) and returns its state.
func (s *chatState) handleDescribe(ctx workflow.Context) (wire.StateResult, error) {
	if err := workflow.Await(ctx, func() bool { return s.phase != phaseStarting }); err != nil {
		return wire.StateResult{}, err
	}
	if s.phase == phaseFailed {
		return wire.StateResult{}, s.failure
	}
	return s.state(), nil
}

// state answers the State query.
func (s *chatState) state() wire.StateResult {
	r := wire.StateResult{
		ChatID: s.chatID, Status: s.phase.status(), Temporary: s.in.Temporary,
		Participants: s.participantInfo(), MessageCount: s.history.Len(), PagedMessages: s.history.Base(),
		TurnCount: s.TurnCount, IsComplete: s.IsComplete, PendingTurns: []string{},
		MaxMessageBytes: s.in.EffectiveMaxMessageBytes(),
		LastError:       s.LastError,
		Selection:       wire.StrategyState{Type: s.selectionType(), State: s.Selection},
		Termination:     wire.StrategyState{Type: s.terminationType(), State: s.Termination},
	}
	window, page := s.in.History.Effective()
	r.History = &wire.HistoryWindow{WindowMessages: window, PageMessages: page, IndexFanout: s.in.History.Fanout()}
	events, bytes := s.in.HistoryBudget.Effective()
	r.HistoryBudget = &wire.HistoryBudget{MaxEvents: events, MaxBytes: bytes}
	if last, ok := s.history.Last(); ok {
		r.LastMessage = &last
	}
	for t := range s.turnQueue.Queued() {
		r.PendingTurns = append(r.PendingTurns, t.msg.MessageID)
	}
	if a := s.turnQueue.Active(); a != nil {
		r.ActiveTurn = a.msg.MessageID
	}
	if s.failure != nil {
		r.Failure = errorMessage(s.failure)
	}
	r.Channels = s.channels.Info(s.Participants)
	r.Store, r.Runs = s.Store, s.Runs
	r.PendingApprovals = s.approvals.Awaiting()
	s.usageState(&r)
	s.transfers.State(&r)
	return r
}

func (s *chatState) participantInfo() []wire.ParticipantInfo {
	out := make([]wire.ParticipantInfo, 0, len(s.Participants))
	for _, p := range s.Participants {
		out = append(out, wire.ParticipantInfo{ID: p.ID, Name: p.Name, Type: p.Kind})
	}
	if len(out) == 0 { // not resolved: report the ids asked for
		for _, id := range s.in.Participants {
			out = append(out, wire.ParticipantInfo{ID: id})
		}
	}
	return out
}

// page answers the History query (history.Page), naming the chat's store when the
// answer holds a stub or page references.
func (s *chatState) page(in wire.HistoryInput) (wire.HistoryResult, error) {
	r := s.history.Page(in)
	if len(r.Pages) > 0 || historyHasStubs(r.Messages) {
		r.Store = s.Store
	}
	return r, nil
}

// ids returns the participants' agent ids in speaking order.
func (s *chatState) ids() []string {
	ids := make([]string, len(s.Participants))
	for i, p := range s.Participants {
		ids[i] = p.ID
	}
	return ids
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// selectionType is the chat's selection strategy type, as State, the snapshot and the
// document name it ("" in the input means sequential).
func (s *chatState) selectionType() string {
	return orDefault(s.in.Selection.Type, strategies.SelectionSequential)
}

// terminationType is the chat's termination strategy type ("" means maxIterations).
func (s *chatState) terminationType() string {
	return orDefault(s.in.Termination.Type, strategies.TerminationMaxIterations)
}
