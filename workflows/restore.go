package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// validateImport refuses an import into a chat that already has history, turns or a
// restored document (DESIGN.md restore table, "invalid"): the chat is left as it was.
func (s *chatState) validateImport(in wire.ImportInput) error {
	if (len(in.Source.Document) == 0) == (in.Source.URI == "") {
		return temporal.NewApplicationError("import needs exactly one of source.document and source.uri", wire.ErrTypeInvalidInput)
	}
	switch s.phase {
	case phaseRunning, phaseImporting:
	case phaseDraining:
		return temporal.NewApplicationError(
			fmt.Sprintf("chat %q is continuing as new; retry and the import goes to the new run", s.chatID),
			wire.ErrTypeContinuingAsNew)
	default:
		return temporal.NewApplicationError(fmt.Sprintf("chat %q is %s and cannot import", s.chatID, s.phase.status()), wire.ErrTypeNotAcceptingTurns)
	}
	if why := s.notEmpty(); why != "" {
		return temporal.NewApplicationError(why, wire.ErrTypeNotEmpty)
	}
	return nil
}

// notEmpty says why this chat cannot take an import, by its first cause: an import in
// progress, a document restored already, or the messages and turns it holds; "" when
// it is empty.
func (s *chatState) notEmpty() string {
	switch {
	case s.importing():
		return fmt.Sprintf("chat %q is importing a document already; wait for that import to end "+
			"(State shows status %q until then), then import only into a new or empty chat", s.chatID, s.phase.status())
	case s.transfers.restored != nil && s.history.Len() == 0 && s.turnQueue.Accepted() == 0:
		return fmt.Sprintf("chat %q was restored from a document already (digest %s); import only into a new or empty chat",
			s.chatID, s.transfers.restored.Digest)
	case s.history.Len() > 0 || s.turnQueue.Accepted() > 0 || s.transfers.restored != nil:
		return fmt.Sprintf("chat %q already has %d messages and %d turns; import only into a new or empty chat",
			s.chatID, s.history.Len(), s.turnQueue.Accepted())
	}
	return ""
}

// handleImport restores a document into this empty chat and returns its new state.
func (s *chatState) handleImport(ctx workflow.Context, in wire.ImportInput) (wire.StateResult, error) {
	if err := s.to(phaseImporting); err != nil {
		return wire.StateResult{}, temporal.NewApplicationError(err.Error(), wire.ErrTypeNotAcceptingTurns)
	}
	defer func() { s.must(s.settle(phaseRunning)) }()
	if err := s.restore(ctx, in.Source); err != nil {
		return wire.StateResult{}, err
	}
	return s.state(), nil
}

// restore loads a document page by page through the ImportChat activity (which reads,
// validates and upgrades it) and applies it. An import that fails after its first call
// may have written pages (under a lineage of its own, which no index names): they are
// deleted before the failure is answered (dropLineage), so that none is orphaned.
func (s *chatState) restore(ctx workflow.Context, src wire.DocumentSource) error {
	lineage := s.transfers.ImportLineage(workflow.GetInfo(ctx).WorkflowExecution.RunID)
	paged, err := s.restoreUnder(ctx, src, lineage)
	if err != nil && paged && s.history.lineage() != lineage {
		s.dropLineage(ctx, lineage)
	}
	return err
}

// dropLineage deletes the pages of lineage (the DeleteLineage activity), retried until
// the store answers; a store that refuses is logged (its pages stay, named by nothing).
func (s *chatState) dropLineage(ctx workflow.Context, lineage string) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: storeTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{wire.ErrTypeInvalidInput, wire.ErrTypeStoreConflict}}})
	in := wire.DeleteLineageInput{ChatID: s.chatID, Store: orDefault(s.Store, s.in.Store), Lineage: lineage}
	if err := workflow.ExecuteActivity(actx, wire.DeleteLineageActivity, in).Get(ctx, nil); err != nil {
		s.log().Warn("the pages of a failed import were not deleted", "lineage", lineage, "error", err)
	}
}

// restoreUnder is restore, its pages written under lineage. paged reports whether
// the first ImportChat call answered with pages (one that fails deletes what it wrote
// itself).
func (s *chatState) restoreUnder(ctx workflow.Context, src wire.DocumentSource, lineage string) (paged bool, err error) {
	actx := workflow.WithActivityOptions(ctx, transferOptions(importTimeout))
	var (
		header  *chatstate.Document
		repairs []string
		history []chat.Message
		index   *wire.PagedHistory // the document's older messages, written as pages
		turns   int                // their answered turns
	)
	paging := &wire.ImportPaging{Lineage: lineage}
	if s.in.History != nil {
		paging.Window = *s.in.History
	}
	for {
		var page wire.ImportPage
		offset := len(history)
		if index != nil {
			offset += index.Base
		}
		err := workflow.ExecuteActivity(actx, wire.ImportChatActivity,
			wire.ImportPageInput{Source: src, Offset: offset, Store: orDefault(s.Store, s.in.Store), Participants: s.ids(),
				SelectionType: s.selectionType(), TerminationType: s.terminationType(), Paging: paging}).Get(ctx, &page)
		if err != nil {
			return index != nil, unwrapActivityError(err)
		}
		if header == nil {
			if page.Header == nil {
				return false, temporal.NewNonRetryableApplicationError("import: first page has no header", wire.ErrTypeInvalidDocument, nil)
			}
			header, repairs = page.Header, page.Repairs
			if page.Base > 0 {
				index = &wire.PagedHistory{Base: page.Base, Lineage: paging.Lineage, Pages: page.Pages, IDs: page.PagedIDs}
				turns = page.PagedTurns
			}
		}
		history = append(history, page.Messages...)
		s.CallIDs = s.CallIDs.Union(page.CallIDs)
		if page.Store != "" {
			s.Store = page.Store
		}
		start := offset // the index of the page's first message
		if offset == 0 && page.Base > 0 {
			start = page.Base // a first page that wrote pages returns the window
		}
		if start+len(page.Messages) >= page.Total || len(page.Messages) == 0 {
			break
		}
	}
	if err := s.apply(ctx, *header, history, index, turns, repairs); err != nil {
		return index != nil, err
	}
	s.seal(ctx) // a long document's older messages go to pages at once
	return index != nil, nil
}

// apply makes the chat the document's: its history, channels (DESIGN.md restore
// table: equivalent, enhanced, reduced), strategy state, idempotency record and
// pending turns, which are then answered in order. history is the window when paged
// holds the document's older messages (pagedTurns answered turns among them).
func (s *chatState) apply(ctx workflow.Context, doc chatstate.Document, history []chat.Message, paged *wire.PagedHistory, pagedTurns int, repairs []string) error {
	if err := s.checkOpenCalls(history); err != nil {
		return err
	}
	// Everything that can refuse the document is read before the chat changes, so a
	// refused import leaves the chat as it was (the ImportChat activity checked the
	// states already: wire.CheckStrategyStates).
	sel, term := s.Selection, s.Termination
	if doc.Strategies.Selection.Type == s.selectionType() {
		var st strategies.SelectionState
		if err := json.Unmarshal(doc.Strategies.Selection.State, &st); err != nil {
			return temporal.NewNonRetryableApplicationError("import: strategies.selection.state: "+err.Error(), wire.ErrTypeInvalidDocument, nil)
		}
		sel = strategies.SelectionState{NextIndex: s.mapIndex(doc.Participants, st.NextIndex)}
	}
	if doc.Strategies.Termination.Type == s.terminationType() {
		term = strategies.TerminationState{}
		if err := json.Unmarshal(doc.Strategies.Termination.State, &term); err != nil {
			return temporal.NewNonRetryableApplicationError("import: strategies.termination.state: "+err.Error(), wire.ErrTypeInvalidDocument, nil)
		}
	}
	s.history = newHistory(history, paged)
	s.channels.Adopt(doc.Channels)
	s.Selection, s.Termination = sel, term
	s.IsComplete = doc.Strategies.IsComplete
	s.turnQueue.Rebuild(&s.history)
	s.detectSuspension(ctx)
	s.TurnCount = s.turnQueue.Answered() + pagedTurns
	s.transfers.restored = &wire.CarriedRestore{Digest: doc.Digest, Source: doc.Source, Repairs: repairs}
	for _, m := range doc.PendingTurns {
		s.enqueue(ctx, m, true)
	}
	return nil
}

// mapIndex turns the document's selection position (an index into its participants)
// into an index into this chat's participants, by agent id, so that a restored group
// chat continues with the agent that was next. An agent not in this chat maps to 0.
func (s *chatState) mapIndex(docParticipants []chatstate.Participant, i int) int {
	if i < 0 || i >= len(docParticipants) {
		return 0
	}
	return max(slices.Index(s.ids(), docParticipants[i].ID), 0)
}
