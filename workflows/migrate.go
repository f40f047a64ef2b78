package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// Migration steps, in State's migration.phase.
const (
	stepDraining   = "draining"        // waiting for an import or the turn in flight
	stepExporting  = "exporting"       // writing the document
	stepStarting   = "starting target" // starting the restored chat and checking its digest
	stepForwarding = "forwarding"      // signalling turns that arrived meanwhile
)

// migration is a move of this chat to another namespace or cluster.
type migration struct {
	target wire.ChatLocation
	step   string
	// under is the phase the migration interrupted: it goes on under the migration
	// (chatState.settle) and is where the chat returns if the migration fails.
	under   phase
	carried []string // messageIds the exported document carries as pendingTurns
	result  *wire.MigrationResult
	err     error
	done    bool
}

// migrated reports whether the chat has moved.
func (s *chatState) migrated() bool { return s.phase == phaseMigrated }

// target normalizes a MigrateInput into a location.
func (s *chatState) target(ctx workflow.Context, in wire.MigrateInput) wire.ChatLocation {
	id := in.ToChatID
	if id == "" {
		id = s.chatID
	}
	ns := in.ToNamespace
	if ns == "" {
		ns = workflow.GetInfo(ctx).Namespace
	}
	return wire.ChatLocation{Cluster: in.ToCluster, Address: in.ToAddress, Namespace: ns, ChatID: id}
}

// validateMigrate refuses a migration to nowhere, to the chat itself, of a chat that
// is not running, or to another target while one is under way. A Migrate for the
// target already under way is admitted: it waits for that migration (a re-run).
func (s *chatState) validateMigrate(in wire.MigrateInput) error {
	if in.ToNamespace == "" && in.ToCluster == "" && in.ToAddress == "" {
		return temporal.NewApplicationError("migrate needs toNamespace, toCluster or toAddress", wire.ErrTypeInvalidInput)
	}
	if in.ToCluster != "" && in.ToAddress != "" {
		return temporal.NewApplicationError("give toCluster or toAddress, not both", wire.ErrTypeInvalidInput)
	}
	if m := s.transfers.migration; m != nil {
		if m.target.Cluster != in.ToCluster || m.target.Address != in.ToAddress || (in.ToNamespace != "" && m.target.Namespace != in.ToNamespace) ||
			(in.ToChatID != "" && m.target.ChatID != in.ToChatID) {
			return temporal.NewApplicationError(fmt.Sprintf("chat %q is already migrating to %s", s.chatID, describe(m.target)),
				wire.ErrTypeMigrating)
		}
		return nil
	}
	if s.phase == phaseDraining {
		// Admitted, the migration would run while the run also continues as new: the
		// chat would be live at the target and in its own next run.
		return temporal.NewApplicationError(
			fmt.Sprintf("chat %q is continuing as new; retry and the migration goes to the new run", s.chatID),
			wire.ErrTypeContinuingAsNew)
	}
	if st := s.phase.status(); st != wire.StatusRunning && st != wire.StatusStarting { // starting, running or importing
		return temporal.NewApplicationError(fmt.Sprintf("chat %q is %s and cannot migrate", s.chatID, st), wire.ErrTypeNotAcceptingTurns)
	}
	return s.migrateRefusal()
}

// handleMigrate moves the chat: it stops taking turns, lets the turn in flight finish,
// exports, starts the target with a restore and checks the target's digest, then
// closes. Queued turns travel in the document; turns that arrive later are forwarded.
// A re-run (after a crash, or a caller that gave up waiting) joins the same migration.
func (s *chatState) handleMigrate(ctx workflow.Context, in wire.MigrateInput) (wire.MigrationResult, error) {
	m := s.transfers.migration
	if m == nil {
		if err := s.migrateRefusal(); err != nil {
			return wire.MigrationResult{}, err
		}
		m = &migration{target: s.target(ctx, in), step: stepDraining}
		s.transfers.migration = m
		s.runMigration(ctx, m)
	}
	if err := workflow.Await(ctx, func() bool { return m.done }); err != nil {
		return wire.MigrationResult{}, err
	}
	if m.err != nil {
		return wire.MigrationResult{}, m.err
	}
	return *m.result, nil
}

func (s *chatState) runMigration(ctx workflow.Context, m *migration) {
	if m.target.Cluster == "" && m.target.Address == "" && m.target.Namespace == workflow.GetInfo(ctx).Namespace && m.target.ChatID == s.chatID {
		s.abortMigration(m, temporal.NewApplicationError("the target is this chat itself", wire.ErrTypeInvalidInput))
		return
	}
	m.under = s.phase
	s.must(s.to(phaseMigrating))
	// It waits for an import, the turn in flight and the start (resolving the
	// participants, restoring a document): the export takes the whole chat.
	_ = workflow.Await(ctx, func() bool {
		return s.turnQueue.Active() == nil && !s.importing() && s.base() != phaseStarting
	})
	if s.phase == phaseFailed {
		s.abortMigration(m, s.failure)
		return
	}
	m.step = stepExporting
	exp, err := s.export(ctx, wire.ExportInput{Sink: wire.SinkAuto})
	if err != nil {
		s.abortMigration(m, err)
		return
	}
	m.carried = exp.PendingTurns
	m.step = stepStarting
	in := s.in
	in.Participants = s.ids()
	in.Restore = &wire.DocumentSource{Document: exp.Document, URI: exp.URI}
	in.Carry = nil // a run that continued as new holds its carry: the target restores the document instead
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: startTargetTimeout, HeartbeatTimeout: transferHeartbeat,
		// Once a target may exist, the migration never gives up by itself: retrying
		// forever is what lets a re-run after any crash finish without a second live chat.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: []string{wire.ErrTypeUnknownCluster, wire.ErrTypeInvalidDocument,
				wire.ErrTypeUnknownAgent, wire.ErrTypeNotEmpty, wire.ErrTypeInvalidInput}},
	})
	var started wire.StartTargetResult
	err = workflow.ExecuteActivity(actx, wire.StartTargetActivity, wire.StartTargetInput{Target: m.target,
		TaskQueue: workflow.GetInfo(ctx).TaskQueueName, Input: in, ExpectedDigest: exp.Digest}).Get(ctx, &started)
	if err != nil {
		s.abortMigration(m, unwrapActivityError(err))
		return
	}
	loc := m.target
	loc.RunID = started.RunID
	m.result = &wire.MigrationResult{Target: loc, Digest: exp.Digest, MessageCount: exp.MessageCount}
	m.step, m.done = stepForwarding, true
	s.must(s.to(phaseMigrated))
	for t := range s.turnQueue.Queued() {
		if t.signal {
			continue // forwarded by forwardLateTurns, or carried in the document
		}
		t.done, t.err = true, s.movedError(t.msg.MessageID, slices.Contains(m.carried, t.msg.MessageID))
	}
}

// abortMigration ends a migration that could not start the target: the chat takes
// turns again, and the caller and State's lastError say why.
func (s *chatState) abortMigration(m *migration, err error) {
	m.err = temporal.NewApplicationError(fmt.Sprintf("migration of chat %q to %s failed, the chat goes on here: %s",
		s.chatID, describe(m.target), errorMessage(err)), wire.ErrTypeMigrationFailed)
	m.done = true
	s.transfers.migration = nil
	if s.phase == phaseMigrating {
		s.must(s.to(m.under))
	}
	s.LastError = &wire.TurnError{Type: wire.ErrTypeMigrationFailed, Message: errorMessage(m.err)}
}

// movedError is the answer to a turn the source will not answer any more.
func (s *chatState) movedError(messageID string, carried bool) error {
	loc := s.transfers.migration.result.Target
	msg := fmt.Sprintf("chat %q moved to %s", s.chatID, describe(loc))
	if carried {
		msg += fmt.Sprintf("; turn %q was carried there: send it there again with the same messageId for its answer", messageID)
	}
	return temporal.NewApplicationError(msg, wire.ErrTypeMigrated, loc)
}

// forwardLateTurns signals to the target every queued turn that the document did not
// carry (turns that arrived while the migration ran), draining the signal channel
// until it is empty, so no signal is lost when the source closes.
func (s *chatState) forwardLateTurns(ctx workflow.Context) error {
	m := s.transfers.migration
	for {
		var late []wire.SendMessageInput
		for _, t := range s.turnQueue.TakeQueued() {
			if t.signal && !slices.Contains(m.carried, t.msg.MessageID) {
				late = append(late, wire.SendMessageInput{MessageID: t.msg.MessageID, Contents: t.msg.Contents, AuthorName: t.msg.AuthorName})
			}
		}
		for {
			var in wire.SendMessageInput
			if !s.signals.ReceiveAsync(&in) {
				break
			}
			late = append(late, in)
		}
		if len(late) == 0 {
			return nil
		}
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumInterval: 30 * time.Second}})
		for _, batch := range forwardBatches(late) {
			if err := workflow.ExecuteActivity(actx, wire.ForwardTurnsActivity, wire.ForwardTurnsInput{Target: m.result.Target, Turns: batch}).Get(ctx, nil); err != nil {
				return err
			}
		}
	}
}

// forwardBatches cuts turns into batches of at most messageBatchBytes encoded (a turn
// larger than that alone), so that no ForwardTurns input passes the payload limit.
func forwardBatches(turns []wire.SendMessageInput) [][]wire.SendMessageInput {
	var batches [][]wire.SendMessageInput
	size := 0
	for _, t := range turns {
		n := t.Bytes()
		if len(batches) == 0 || size+n > messageBatchBytes {
			batches, size = append(batches, nil), 0
		}
		batches[len(batches)-1] = append(batches[len(batches)-1], t)
		size += n
	}
	return batches
}

func describe(l wire.ChatLocation) string {
	s := fmt.Sprintf("namespace %q as chat %q", l.Namespace, l.ChatID)
	if l.Cluster != "" {
		s = fmt.Sprintf("cluster %q, ", l.Cluster) + s
	} else if l.Address != "" {
		s = fmt.Sprintf("the cluster at %s, ", l.Address) + s
	}
	return s
}
