package workflows

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// allPhases is every phase, in order.
var allPhases = []phase{phaseStarting, phaseRunning, phaseImporting, phaseDraining,
	phaseMigrating, phaseMigrated, phaseCompleted, phaseFailed}

// documentedMoves is phase.go's table of moves, written out again: the test fails when
// phaseMoves and the documentation drift apart.
var documentedMoves = map[[2]phase]bool{
	{phaseStarting, phaseRunning}:    true,
	{phaseStarting, phaseFailed}:     true,
	{phaseStarting, phaseMigrating}:  true,
	{phaseRunning, phaseImporting}:   true,
	{phaseImporting, phaseRunning}:   true,
	{phaseImporting, phaseMigrating}: true,
	{phaseRunning, phaseDraining}:    true,
	{phaseDraining, phaseRunning}:    true,
	{phaseDraining, phaseMigrating}:  true,
	{phaseRunning, phaseMigrating}:   true,
	{phaseRunning, phaseCompleted}:   true,
	{phaseMigrating, phaseMigrated}:  true,
	{phaseMigrating, phaseFailed}:    true,
	{phaseMigrating, phaseRunning}:   true,
	{phaseMigrating, phaseDraining}:  true,
	{phaseMigrating, phaseCompleted}: true,
	{phaseMigrating, phaseStarting}:  true,
}

func TestEveryDocumentedMoveIsTakenAndEveryOtherRefused(t *testing.T) {
	for _, from := range allPhases {
		for _, to := range allPhases {
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				s := &chatState{chatID: "c1", phase: from}
				err := s.to(to)
				if documentedMoves[[2]phase{from, to}] {
					require.NoError(t, err)
					assert.Equal(t, to, s.phase)
					return
				}
				require.Error(t, err)
				assert.Contains(t, err.Error(), fmt.Sprintf(`chat "c1": workflows: no move from phase %s to %s`, from, to))
				assert.Equal(t, from, s.phase, "a refused move leaves the phase")
			})
		}
	}
}

func TestFinalPhasesMoveNowhere(t *testing.T) {
	for _, p := range []phase{phaseMigrated, phaseCompleted, phaseFailed} {
		assert.Empty(t, phaseMoves[p], "%s is final", p)
	}
}

func TestStatusIsTheOneClientsReadInEachPhase(t *testing.T) {
	want := map[phase]string{
		phaseStarting: "starting", phaseRunning: "running", phaseImporting: "running", phaseDraining: "running",
		phaseMigrating: "migrating", phaseMigrated: "migrated", phaseCompleted: "completed", phaseFailed: "failed",
	}
	for _, p := range allPhases {
		assert.Equal(t, want[p], p.status(), "%s", p)
	}
}

func TestUnderAMigrationTheInterruptedPhaseMovesAndComesBackWhenItFails(t *testing.T) {
	s := &chatState{chatID: "c1", phase: phaseImporting}
	s.transfers.migration = &migration{under: s.phase}
	require.NoError(t, s.to(phaseMigrating))
	assert.True(t, s.importing(), "the import goes on under the migration")

	require.NoError(t, s.settle(phaseRunning), "the import ends")
	assert.Equal(t, phaseMigrating, s.phase, "the chat still migrates")
	assert.Equal(t, phaseRunning, s.transfers.migration.under)
	assert.False(t, s.importing())

	err := s.settle(phaseStarting)
	require.Error(t, err, "running never goes back to starting, under a migration or not")
	assert.Equal(t, phaseRunning, s.transfers.migration.under)

	s.abortMigration(s.transfers.migration, fmt.Errorf("target down"))
	assert.Equal(t, phaseRunning, s.phase, "a failed migration returns to the phase under it")
	assert.Nil(t, s.transfers.migration)
}

func TestADrainUnderAMigrationStillRefusesAsADrain(t *testing.T) {
	s := &chatState{chatID: "c1", phase: phaseDraining}
	s.transfers.migration = &migration{under: s.phase}
	require.NoError(t, s.to(phaseMigrating))
	assert.True(t, s.draining())
	require.NoError(t, s.to(phaseMigrated))
	assert.True(t, s.draining(), "the run still hands over once the migration is done")
}

// recordingLogger keeps the messages of Error.
type recordingLogger struct{ errors []string }

func (l *recordingLogger) Debug(string, ...any) {}
func (l *recordingLogger) Info(string, ...any)  {}
func (l *recordingLogger) Warn(string, ...any)  {}
func (l *recordingLogger) Error(m string, kv ...any) {
	l.errors = append(l.errors, fmt.Sprint(append([]any{m}, kv...)...))
}

func TestARefusedMoveTheCodeMakesIsLoggedAsAnError(t *testing.T) {
	l := &recordingLogger{}
	s := &chatState{chatID: "c1", phase: phaseCompleted, log: func() log.Logger { return l }}
	s.must(s.settle(phaseRunning))
	require.Len(t, l.errors, 1)
	assert.Contains(t, l.errors[0], "no move from phase completed to running")
	assert.Equal(t, phaseCompleted, s.phase)

	s.must(nil)
	assert.Len(t, l.errors, 1, "a move taken logs nothing")
}

func TestImportIsAdmittedOnlyIntoARunningChat(t *testing.T) {
	in := wire.ImportInput{Source: wire.DocumentSource{URI: "file:///doc.json"}}
	want := map[phase]string{
		phaseStarting: wire.ErrTypeNotAcceptingTurns, phaseRunning: "", phaseImporting: wire.ErrTypeNotEmpty,
		phaseDraining: wire.ErrTypeContinuingAsNew, phaseMigrating: wire.ErrTypeNotAcceptingTurns,
		phaseMigrated: wire.ErrTypeNotAcceptingTurns, phaseCompleted: wire.ErrTypeNotAcceptingTurns,
		phaseFailed: wire.ErrTypeNotAcceptingTurns,
	}
	for _, p := range allPhases {
		s := &chatState{chatID: "c1", phase: p, turnQueue: newTurnQueue()}
		err := s.validateImport(in)
		if want[p] == "" {
			assert.NoError(t, err, "%s", p)
			continue
		}
		assert.Equal(t, want[p], errorType(err), "%s: %v", p, err)
	}
}

func TestAStartGoesOnUnderAMigrationAndOneThatFailsFirstReturnsToIt(t *testing.T) {
	l := &recordingLogger{}
	s := &chatState{chatID: "c1", phase: phaseStarting, log: func() log.Logger { return l }}
	s.transfers.migration = &migration{under: s.phase}
	require.NoError(t, s.to(phaseMigrating))
	s.abortMigration(s.transfers.migration, fmt.Errorf("export failed"))
	assert.Equal(t, phaseStarting, s.phase, "the start has not ended")
	s.must(s.settle(phaseRunning))
	assert.Equal(t, phaseRunning, s.phase, "then it ends as any start")

	s = &chatState{chatID: "c2", phase: phaseStarting, log: func() log.Logger { return l }}
	s.transfers.migration = &migration{under: s.phase}
	require.NoError(t, s.to(phaseMigrating))
	s.must(s.settle(phaseRunning))
	assert.Equal(t, phaseMigrating, s.phase, "a start that ends under a migration leaves it migrating")
	assert.Equal(t, phaseRunning, s.transfers.migration.under)
	assert.Empty(t, l.errors)
}

// A Migrate is admitted only where the chat can hand itself over: a run that continues
// as new refuses it retryably (ContinuingAsNew), so that the retry reaches the new run;
// admitted, it would migrate while the run also continued, leaving the chat live twice.
func TestMigrateIsRefusedRetryablyWhileTheRunContinuesAsNew(t *testing.T) {
	in := wire.MigrateInput{ToNamespace: "archive"}
	want := map[phase]string{
		phaseStarting: "", phaseRunning: "", phaseImporting: "",
		phaseDraining: wire.ErrTypeContinuingAsNew, phaseMigrating: wire.ErrTypeNotAcceptingTurns,
		phaseMigrated: wire.ErrTypeNotAcceptingTurns, phaseCompleted: wire.ErrTypeNotAcceptingTurns,
		phaseFailed: wire.ErrTypeNotAcceptingTurns,
	}
	for _, p := range allPhases {
		s := &chatState{chatID: "c1", phase: p, turnQueue: newTurnQueue()}
		err := s.validateMigrate(in)
		if want[p] == "" {
			assert.NoError(t, err, "%s", p)
			continue
		}
		assert.Equal(t, want[p], errorType(err), "%s: %v", p, err)
	}
}

// Each refusal of an import names its cause: an import in progress (also under a
// migration that waits for it), a document restored already, or the messages and
// turns the chat holds.
func TestARefusedImportSaysWhy(t *testing.T) {
	in := wire.ImportInput{Source: wire.DocumentSource{URI: "file:///doc.json"}}
	for _, tc := range []struct {
		name  string
		s     *chatState
		wants []string
	}{
		{"an import runs", &chatState{chatID: "c1", phase: phaseImporting, turnQueue: newTurnQueue()},
			[]string{`chat "c1" is importing a document already`, "wait for that import"}},
		{"a document was restored", &chatState{chatID: "c1", phase: phaseRunning, turnQueue: newTurnQueue(),
			transfers: transfers{restored: &wire.CarriedRestore{Digest: "sha256:abc"}}},
			[]string{`chat "c1" was restored from a document already`, "sha256:abc"}},
		{"messages", &chatState{chatID: "c1", phase: phaseRunning, turnQueue: newTurnQueue(),
			history: newHistory([]chat.Message{{MessageID: "m1"}, {MessageID: "m2"}}, nil)},
			[]string{`chat "c1" already has 2 messages and 0 turns`}},
	} {
		err := tc.s.validateImport(in)
		require.Error(t, err, tc.name)
		assert.Equal(t, wire.ErrTypeNotEmpty, errorType(err), tc.name)
		for _, w := range tc.wants {
			assert.Contains(t, err.Error(), w, tc.name)
		}
		if tc.name != "messages" {
			assert.NotContains(t, err.Error(), "0 messages", "%s: %v", tc.name, err)
		}
	}
}
