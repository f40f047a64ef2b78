package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// turn is one user turn from its arrival to its answer.
type turn struct {
	msg    chat.Message
	done   bool
	err    error // set when the turn failed or was refused after being queued
	start  int   // index in history of the turn's first reply (when done without err)
	end    int   // one past its last reply
	signal bool  // arrived by signal: nobody waits for it
	// mark is the history's length when the turn (or its resumption) began: what a
	// failure takes the history back to.
	mark int
	// suspended: the turn waits for the approval of tool calls (tools.go).
	suspended bool
	// bytes is msg's encoded size as sent (sentBytes), for QueuedTurnsLimit; set when
	// the turn is queued.
	bytes int
}

// chatState is the whole state of one chat, with a method per handler.
type chatState struct {
	chatID string
	// reencrypt: a Reencrypt signal asked for a hand-over (reencrypt.go).
	reencrypt    bool
	in           wire.AgentChatInput
	status       string
	failure      error
	participants []wire.Participant
	history      []chat.Message
	stubs        stubTotal // HistoryStubBytes(history), as a running total (length)
	selState     strategies.SelectionState
	termState    strategies.TerminationState
	isComplete   bool
	turnCount    int
	attempted    int // turns run, answered or failed: a temporary thread closes after one
	// channels are the chat's channels in order of creation; a channel whose key no
	// participant has is dormant (kept from an import, resumed when its agent joins).
	channels []*channel
	// boundary is the strategies' state before the active turn: what an export takes and
	// a failed turn goes back to. runTurn and resumeSuspended set it; it is read only
	// while a turn is active.
	boundary strategyState
	// importing is set while a document is being loaded; no turn runs meanwhile.
	importing bool
	// resumed: the carry was taken over before the handlers were registered
	// (resumeEarly).
	resumed   bool
	restored  *wire.CarriedRestore
	migration *migration
	// draining is set while the run hands over to a new one: new updates are refused
	// (retryably) and the turns already accepted are answered.
	draining bool
	// store names where stubbed message bodies are ("" = none yet).
	store string
	runs  int
	// suspension is the turn waiting for approvals, if any; decisions are the answers
	// given so far, by callId.
	suspension *suspension
	decisions  map[string]wire.Decision
	// callIDs are the call ids of the messages whose bodies left the workflow.
	callIDs wire.CallIDFilter
	// applyEach: decisions are applied as they are given (versionApplyEachDecision).
	applyEach bool
	// exporting counts the exports reading the chat; no turn resumes meanwhile.
	exporting int
	// toolRuns are the tool calls that ran in turns taken back since (toolruns.go).
	toolRuns []wire.ToolRun
	// sentCommitted is the committed length of the history at the previous model call
	// of this run (what that call's worker has cached); not carried to the next run.
	sentCommitted int
	signals       workflow.ReceiveChannel

	queue  []*turn
	active *turn
	// turns records every accepted turn by messageId: the idempotency record.
	turns     map[string]*turn
	lastError *wire.TurnError
}

func newChatState(ctx workflow.Context, in wire.AgentChatInput) *chatState {
	return &chatState{
		chatID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		in:     in,
		status: wire.StatusStarting,
		turns:  map[string]*turn{},
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
	if err := workflow.SetQueryHandler(ctx, wire.StateQuery, func() (wire.StateResult, error) { return s.state(), nil }); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, wire.HistoryQuery, s.page)
}

// fail records why the chat could not start; waiting handlers return err.
func (s *chatState) fail(err error) {
	s.status = wire.StatusFailed
	s.failure = err
	for _, t := range s.queue {
		t.done, t.err = true, err
	}
	s.queue = nil
}

// closed reports whether the chat takes no more turns.
func (s *chatState) closed() bool {
	return (s.isComplete && !s.in.Termination.AutoReset) || (s.in.Temporary && s.attempted > 0)
}

// handleDescribe waits until the chat has started (or failed to) and returns its state.
func (s *chatState) handleDescribe(ctx workflow.Context) (wire.StateResult, error) {
	if err := workflow.Await(ctx, func() bool { return s.status != wire.StatusStarting }); err != nil {
		return wire.StateResult{}, err
	}
	if s.failure != nil {
		return wire.StateResult{}, s.failure
	}
	return s.state(), nil
}

// state answers the State query.
func (s *chatState) state() wire.StateResult {
	r := wire.StateResult{
		ChatID: s.chatID, Status: s.status, Temporary: s.in.Temporary,
		Participants: s.participantInfo(), MessageCount: len(s.history),
		TurnCount: s.turnCount, IsComplete: s.isComplete, PendingTurns: []string{},
		LastError: s.lastError,
		Selection: wire.StrategyState{Type: orDefault(s.in.Selection.Type, strategies.SelectionSequential), State: s.selState},
		Termination: wire.StrategyState{Type: orDefault(s.in.Termination.Type, strategies.TerminationMaxIterations),
			State: s.termState},
	}
	if n := len(s.history); n > 0 {
		last := s.history[n-1]
		r.LastMessage = &last
	}
	for _, t := range s.queue {
		r.PendingTurns = append(r.PendingTurns, t.msg.MessageID)
	}
	if s.active != nil {
		r.ActiveTurn = s.active.msg.MessageID
	}
	if s.failure != nil {
		r.Failure = s.failure.Error()
	}
	for _, c := range s.channels {
		r.Channels = append(r.Channels, wire.ChannelInfo{ChannelKey: c.key, ChannelType: c.typ, Active: s.channelActive(c), ChannelState: c.state})
	}
	if s.restored != nil {
		r.RestoredDigest, r.Repairs = s.restored.Digest, s.restored.Repairs
	}
	r.Store, r.Runs = s.store, s.runs
	r.PendingApprovals = s.awaitingApproval()
	if m := s.migration; m != nil {
		if m.result != nil {
			loc := m.result.Target
			r.MigratedTo = &loc
		} else {
			r.Migration = &wire.MigrationState{Target: m.target, Phase: m.phase}
		}
	}
	return r
}

func (s *chatState) participantInfo() []wire.ParticipantInfo {
	out := make([]wire.ParticipantInfo, 0, len(s.participants))
	for _, p := range s.participants {
		out = append(out, wire.ParticipantInfo{ID: p.ID, Name: p.Name, Type: p.Kind})
	}
	if len(out) == 0 { // not resolved: report the ids asked for
		for _, id := range s.in.Participants {
			out = append(out, wire.ParticipantInfo{ID: id})
		}
	}
	return out
}

// page answers the History query: at most HistoryPageBytes of encoded messages (or
// in.MaxBytes, when smaller), and always at least one.
func (s *chatState) page(in wire.HistoryInput) (wire.HistoryResult, error) {
	total := len(s.history)
	from := min(max(in.Offset, 0), total)
	to := total
	if in.Limit > 0 {
		to = min(from+in.Limit, total)
	}
	maxBytes := wire.HistoryPageBytes
	if in.MaxBytes > 0 {
		maxBytes = min(in.MaxBytes, wire.HistoryPageBytes)
	}
	size := 0
	for i := from; i < to; i++ {
		if size += wire.MessageBytes(s.history[i]) + 1; size > maxBytes && i > from {
			to = i
			break
		}
	}
	msgs := append([]chat.Message{}, s.history[from:to]...)
	r := wire.HistoryResult{Messages: msgs, Offset: from, Total: total}
	if historyHasStubs(msgs) {
		r.Store = s.store
	}
	return r, nil
}

// ids returns the participants' agent ids in speaking order.
func (s *chatState) ids() []string {
	ids := make([]string, len(s.participants))
	for i, p := range s.participants {
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
