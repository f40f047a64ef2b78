package workflows

import (
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// The typed keys of the chat's search attributes (wire.Search*).
var (
	searchStatus       = temporal.NewSearchAttributeKeyKeyword(wire.SearchStatus)
	searchAgents       = temporal.NewSearchAttributeKeyKeywordList(wire.SearchAgents)
	searchTurns        = temporal.NewSearchAttributeKeyInt64(wire.SearchTurns)
	searchLastActivity = temporal.NewSearchAttributeKeyTime(wire.SearchLastActivity)
)

// reindex brings the chat's search attributes up to date: its status, agents and turn
// count, with the last activity, when any of them changed. A chat that did not start
// with them (a namespace without them, a run recorded before them) sets none, so that
// histories replay unchanged and no upsert names an attribute the namespace lacks.
// What the run started with, or upserted last, is read back from the workflow's info:
// an unchanged chat adds no event, and a turn adds one.
func (s *chatState) reindex(ctx workflow.Context) {
	attrs := workflow.GetTypedSearchAttributes(ctx)
	status, indexed := attrs.GetKeyword(searchStatus)
	if !indexed {
		return
	}
	var updates []temporal.SearchAttributeUpdate
	if want := s.phase.status(); want != status {
		updates = append(updates, searchStatus.ValueSet(want))
	}
	agents := make([]string, len(s.Participants))
	for i, p := range s.Participants {
		agents[i] = p.ID
	}
	if have, _ := attrs.GetKeywordList(searchAgents); len(agents) > 0 && !slices.Equal(have, agents) {
		updates = append(updates, searchAgents.ValueSet(agents))
	}
	if have, _ := attrs.GetInt64(searchTurns); have != int64(s.TurnCount) {
		updates = append(updates, searchTurns.ValueSet(int64(s.TurnCount)))
	}
	if len(updates) == 0 {
		return
	}
	updates = append(updates, searchLastActivity.ValueSet(workflow.Now(ctx).UTC()))
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		s.log().Warn("search attributes not updated", "error", err)
	}
}
