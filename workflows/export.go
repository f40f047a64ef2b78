package workflows

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/wire"
)

// Timeouts of the transfer activities.
const (
	exportTimeout      = 2 * time.Minute
	importTimeout      = 2 * time.Minute
	startTargetTimeout = 2 * time.Minute
	transferHeartbeat  = 20 * time.Second
)

// registerTransfer sets the handlers of export, import, migration and participants.
func (s *chatState) registerTransfer(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, wire.SnapshotQuery, func() (wire.Snapshot, error) {
		snap := s.snapshot()
		snap.RunID = workflow.GetInfo(ctx).WorkflowExecution.RunID
		return snap, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.ExportUpdate, s.handleExport,
		workflow.UpdateHandlerOptions{Validator: s.validateExport}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.ImportUpdate, s.handleImport,
		workflow.UpdateHandlerOptions{Validator: s.validateImport}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.MigrateUpdate, s.handleMigrate,
		workflow.UpdateHandlerOptions{Validator: s.validateMigrate}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.ApproveUpdate, s.handleApprove,
		workflow.UpdateHandlerOptions{Validator: s.validateApprove}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, wire.AddParticipantsUpdate, s.handleAddParticipants,
		workflow.UpdateHandlerOptions{Validator: s.validateAddParticipants})
}

// snapshot answers the ExportSnapshot query: the chat at its last turn boundary. While
// a turn runs, that is its start: the history before it, the strategies' and the
// channels' states of that moment (a service thread's watermark must name a message of
// the exported history, or the restored chat would send the service everything again).
func (s *chatState) snapshot() wire.Snapshot {
	st := strategyState{sel: s.Selection, term: s.Termination}
	length := s.history.Len()
	channels := s.channels.Document()
	pending := make([]chat.Message, 0, s.turnQueue.Len()+1)
	if a := s.turnQueue.Active(); a != nil {
		st, length = s.boundary, a.mark
		if s.history.IndexOf(a.msg.MessageID) >= a.mark {
			pending = append(pending, a.msg) // a new turn; a resumed one is in the history already
		}
		for i, c := range channels {
			if state, ok := st.channels.Of(c.ChannelKey); ok {
				channels[i].ChannelState = state
			}
		}
	}
	for t := range s.turnQueue.Queued() {
		pending = append(pending, t.msg)
	}
	parts := make([]chatstate.Participant, 0, len(s.Participants))
	for _, p := range s.Participants {
		parts = append(parts, chatstate.Participant{ID: p.ID, Name: p.Name, Type: string(p.Kind)})
	}
	return wire.Snapshot{
		ChatID: s.chatID, Participants: parts, Channels: channels,
		Strategies: chatstate.Strategies{
			Selection:   chatstate.Strategy{Type: s.selectionType(), State: mustJSON(st.sel)},
			Termination: chatstate.Strategy{Type: s.terminationType(), State: mustJSON(st.term)},
			IsComplete:  s.IsComplete,
		},
		PendingTurns: pending, HistoryLength: length, Stubbed: s.history.Base() > 0 || historyHasStubs(s.history.Slice(0, length)),
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs of ints are passed
	}
	return b
}

func (s *chatState) validateExport(in wire.ExportInput) error {
	switch in.Sink {
	case "", wire.SinkAuto, wire.SinkInline, wire.SinkStore:
	case wire.SinkFile:
		if in.Path == "" {
			return temporal.NewApplicationError(`sink "file" needs a path`, wire.ErrTypeInvalidInput)
		}
	default:
		return temporal.NewApplicationError(fmt.Sprintf("unknown sink %q (auto, inline, store, file)", in.Sink), wire.ErrTypeInvalidInput)
	}
	// A continued run took its carry over before the handlers were registered: an
	// Export delivered with its first task (sent while the run before continued as
	// new) finds the chat whole, and waits for the start to end (handleExport).
	if s.phase == phaseFailed || (s.phase == phaseStarting && !s.continuedStart()) {
		return temporal.NewApplicationError("chat "+s.chatID+" has not started; nothing to export", wire.ErrTypeNotAcceptingTurns)
	}
	return nil
}

// handleExport runs the ExportChat activity, which reads this run's snapshot and
// history through queries and writes the document to the sink.
func (s *chatState) handleExport(ctx workflow.Context, in wire.ExportInput) (wire.ExportResult, error) {
	if err := workflow.Await(ctx, func() bool { return s.phase != phaseStarting }); err != nil {
		return wire.ExportResult{}, err
	}
	if err := s.validateExport(in); err != nil { // the start failed meanwhile
		return wire.ExportResult{}, err
	}
	release, err := s.awaitExportBoundary(ctx)
	if err != nil {
		return wire.ExportResult{}, err
	}
	defer release()
	return s.export(ctx, in)
}

func (s *chatState) export(ctx workflow.Context, in wire.ExportInput) (wire.ExportResult, error) {
	actx := workflow.WithActivityOptions(ctx, transferOptions(exportTimeout))
	var res wire.ExportResult
	err := workflow.ExecuteActivity(actx, wire.ExportChatActivity, wire.ExportChatInput{
		ChatID: s.chatID, RunID: workflow.GetInfo(ctx).WorkflowExecution.RunID, Export: in, Store: s.Store}).Get(ctx, &res)
	if err != nil {
		return wire.ExportResult{}, unwrapActivityError(err)
	}
	return res, nil
}

func transferOptions(timeout time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    transferHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{wire.ErrTypeInvalidDocument, wire.ErrTypeInvalidInput,
				wire.ErrTypeUnknownCluster, wire.ErrTypeNotEmpty},
		},
	}
}
