package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
