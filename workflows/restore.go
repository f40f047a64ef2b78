package workflows

import (
	"encoding/json"
	"fmt"
	"slices"

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
	case s.Restored != nil && s.history.Len() == 0 && len(s.turns) == 0:
		return fmt.Sprintf("chat %q was restored from a document already (digest %s); import only into a new or empty chat",
			s.chatID, s.Restored.Digest)
	case s.history.Len() > 0 || len(s.turns) > 0 || s.Restored != nil:
		return fmt.Sprintf("chat %q already has %d messages and %d turns; import only into a new or empty chat",
			s.chatID, s.history.Len(), len(s.turns))
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
// validates and upgrades it) and applies it.
func (s *chatState) restore(ctx workflow.Context, src wire.DocumentSource) error {
	actx := workflow.WithActivityOptions(ctx, transferOptions(importTimeout))
	var (
		header  *chatstate.Document
		repairs []string
		history []chat.Message
		paged   *wire.PagedHistory // the document's older messages, written as pages
		turns   int                // their answered turns
	)
	s.imports++
	paging := &wire.ImportPaging{Lineage: fmt.Sprintf("%s-i%d", workflow.GetInfo(ctx).WorkflowExecution.RunID, s.imports)}
	if s.in.History != nil {
		paging.Window = *s.in.History
	}
	for {
		var page wire.ImportPage
		offset := len(history)
		if paged != nil {
			offset += paged.Base
		}
		err := workflow.ExecuteActivity(actx, wire.ImportChatActivity,
			wire.ImportPageInput{Source: src, Offset: offset, Store: orDefault(s.Store, s.in.Store), Participants: s.ids(),
				SelectionType: s.selectionType(), TerminationType: s.terminationType(), Paging: paging}).Get(ctx, &page)
		if err != nil {
			return unwrapActivityError(err)
		}
		if header == nil {
			if page.Header == nil {
				return temporal.NewNonRetryableApplicationError("import: first page has no header", wire.ErrTypeInvalidDocument, nil)
			}
			header, repairs = page.Header, page.Repairs
			if page.Base > 0 {
				paged = &wire.PagedHistory{Base: page.Base, Lineage: paging.Lineage, Pages: page.Pages, IDs: page.PagedIDs}
				turns = page.PagedTurns
			}
		}
		history = append(history, page.Messages...)
		s.CallIDs = s.CallIDs.Union(page.CallIDs)
		if page.Store != "" {
			s.Store = page.Store
		}
		start := offset // the index of the page's first message
		if offset == 0 && page.Base > 0 && changed(ctx, changeImportWindowStart) {
			start = page.Base // a first page that wrote pages returns the window
		}
		if start+len(page.Messages) >= page.Total || len(page.Messages) == 0 {
			break
		}
	}
	if err := s.apply(ctx, *header, history, paged, turns, repairs); err != nil {
		return err
	}
	s.seal(ctx) // a long document's older messages go to pages at once
	return nil
}

// apply makes the chat the document's: its history, channels (DESIGN.md restore
// table: equivalent, enhanced, reduced), strategy state, idempotency record and
// pending turns, which are then answered in order. history is the window when paged
// holds the document's older messages (pagedTurns answered turns among them).
func (s *chatState) apply(ctx workflow.Context, doc chatstate.Document, history []chat.Message, paged *wire.PagedHistory, pagedTurns int, repairs []string) error {
	if err := s.checkOpenCalls(history); err != nil {
		return err
	}
	s.history = newHistory(history, paged)
	s.adoptChannels(doc.Channels)
	if doc.Strategies.Selection.Type == s.selectionType() {
		var st strategies.SelectionState
		if err := json.Unmarshal(doc.Strategies.Selection.State, &st); err != nil {
			return temporal.NewNonRetryableApplicationError("import: strategies.selection.state: "+err.Error(), wire.ErrTypeInvalidDocument, nil)
		}
		s.Selection = strategies.SelectionState{NextIndex: s.mapIndex(doc.Participants, st.NextIndex)}
	}
	if doc.Strategies.Termination.Type == s.terminationType() {
		if err := json.Unmarshal(doc.Strategies.Termination.State, &s.Termination); err != nil {
			return temporal.NewNonRetryableApplicationError("import: strategies.termination.state: "+err.Error(), wire.ErrTypeInvalidDocument, nil)
		}
	}
	s.IsComplete = doc.Strategies.IsComplete
	s.rebuildTurns()
	s.detectSuspension(ctx)
	s.TurnCount = s.answeredTurns() + pagedTurns
	s.Restored = &wire.CarriedRestore{Digest: doc.Digest, Source: doc.Source, Repairs: repairs}
	for _, m := range doc.PendingTurns {
		s.enqueue(ctx, m, true)
	}
	return nil
}

// answeredTurns counts the turns of the rebuilt record that were answered: not failed,
// not waiting (detectSuspension).
func (s *chatState) answeredTurns() int {
	n := 0
	for _, t := range s.turns {
		if t.err == nil && !t.suspended {
			n++
		}
	}
	return n
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

// rebuildTurns recreates the idempotency record from the history: each user message
// and the replies up to the next user message are one turn. A turn whose replies end on
// tool results that are not the round limit's (wire.FailedAfterTools) is a resumed turn that
// failed after its tools ran: it is recorded as failed, so that a retry of its
// messageId is refused as it was before the continue-as-new, export or migration.
func (s *chatState) rebuildTurns() {
	s.turns, s.TurnCount = map[string]*turn{}, 0
	var failed []*turn
	for i, end := range s.history.Turns() {
		m, _ := s.history.At(i)
		t := &turn{msg: m, done: true, start: i + 1, end: end}
		s.turns[m.MessageID] = t
		s.TurnCount++
		if last, _ := s.history.At(end - 1); end > i+1 && wire.FailedAfterTools(last) {
			failed = append(failed, t)
		}
	}
	for _, t := range failed {
		t.err = temporal.NewApplicationError("it failed in an earlier run, or in the chat this one was restored from", wire.ErrTypeTurnFailed)
	}
}
