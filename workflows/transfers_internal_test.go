package workflows

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// Each import of a run has a lineage of its own; an export counts until released.
func TestTransfersCountImportsAndExports(t *testing.T) {
	var tr transfers
	assert.Equal(t, "run1-i1", tr.ImportLineage("run1"))
	assert.Equal(t, "run1-i2", tr.ImportLineage("run1"))

	assert.False(t, tr.Exporting())
	release1, release2 := tr.StartExport(), tr.StartExport()
	release1()
	assert.True(t, tr.Exporting(), "one export still reads the chat")
	release2()
	assert.False(t, tr.Exporting())
}

// The restored document's record crosses a continue-as-new as a copy, and State
// reports it.
func TestTransfersCarryTheRestoredDocument(t *testing.T) {
	var tr transfers
	assert.Nil(t, tr.Carry(), "nothing restored: nothing carried")
	tr.Resume(&wire.CarriedRestore{Digest: "sha256:ab", Repairs: []string{"r1"}})
	c := tr.Carry()
	require.NotNil(t, c)
	c.Digest = "changed"
	var next transfers
	next.Resume(tr.Carry())
	var st wire.StateResult
	next.State(&st)
	assert.Equal(t, "sha256:ab", st.RestoredDigest, "the carry is a copy")
	assert.Equal(t, []string{"r1"}, st.Repairs)
	assert.Nil(t, st.Migration)
	assert.Nil(t, st.MigratedTo)
}

// A migration under way reports its target and step; once done, where the chat went.
// The phase under it moves as phaseMoves allows.
func TestTransfersReportTheMigration(t *testing.T) {
	var tr transfers
	_, ok := tr.Under()
	assert.False(t, ok)
	assert.Nil(t, tr.MigratedTo())
	assert.Nil(t, tr.MigrationResult())

	target := wire.ChatLocation{Namespace: "archive", ChatID: "c1"}
	tr.migration = &migration{target: target, step: stepExporting, under: phaseImporting}
	var st wire.StateResult
	tr.State(&st)
	assert.Equal(t, &wire.MigrationState{Target: target, Phase: stepExporting}, st.Migration)
	assert.Equal(t, target, tr.MigrationTarget())

	require.NoError(t, tr.MoveUnder(phaseRunning))
	require.Error(t, tr.MoveUnder(phaseStarting), "running never goes back to starting")
	under, ok := tr.Under()
	assert.True(t, ok)
	assert.Equal(t, phaseRunning, under)

	moved := target
	moved.RunID = "r2"
	tr.migration.result = &wire.MigrationResult{Target: moved, Digest: "sha256:cd"}
	st = wire.StateResult{}
	tr.State(&st)
	assert.Nil(t, st.Migration)
	assert.Equal(t, &moved, st.MigratedTo)
	assert.Equal(t, &moved, tr.MigratedTo())
	res := tr.MigrationResult()
	res.Digest = "changed"
	assert.Equal(t, "sha256:cd", tr.MigrationResult().Digest, "the result is a copy")
}

// A document apply refuses (a strategy state of the chat's own type that does not
// decode) leaves the chat as it was: its history, its strategies' states, its channels
// — never a half-imported chat — whichever of the two states is bad.
func TestApplyRefusedChangesNothing(t *testing.T) {
	for name, bad := range map[string]chatstate.Strategies{
		"selection":   {Selection: chatstate.Strategy{Type: strategies.SelectionSequential, State: json.RawMessage(`{"nextIndex":"one"}`)}},
		"termination": {Termination: chatstate.Strategy{Type: strategies.TerminationMaxIterations, State: json.RawMessage(`{"iterations":[1]}`)}},
		"both, selection good": {
			Selection:   chatstate.Strategy{Type: strategies.SelectionSequential, State: json.RawMessage(`{"nextIndex":1}`)},
			Termination: chatstate.Strategy{Type: strategies.TerminationMaxIterations, State: json.RawMessage(`"x"`)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := []chat.Message{chat.TextMessage("u1", chat.RoleUser, "alice", "hi"), chat.TextMessage("u1/1", chat.RoleAssistant, "Writer", "hello")}
			s := &chatState{history: newHistory(slices.Clone(before), nil)}
			s.Selection = strategies.SelectionState{NextIndex: 0}
			s.Termination = strategies.TerminationState{Iterations: 3}
			doc := chatstate.Document{Strategies: bad}
			imported := []chat.Message{chat.TextMessage("d1", chat.RoleUser, "bob", "other")}
			err := s.apply(nil, doc, imported, nil, 0, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "strategies.")
			assert.Equal(t, before, s.history.Window(), "the history is the chat's own")
			assert.Equal(t, strategies.SelectionState{NextIndex: 0}, s.Selection)
			assert.Equal(t, strategies.TerminationState{Iterations: 3}, s.Termination)
		})
	}
}
