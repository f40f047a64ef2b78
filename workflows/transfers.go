package workflows

import (
	"fmt"

	"github.com/agentchat/agentchat/wire"
)

// transfers is what the chat keeps of the documents that leave it or come into it:
// exports (export.go), imports and restores (restore.go) and a migration (migrate.go).
// It owns that data: outside those files and this one, no code reads or writes it but
// through these methods, so that its rules live here:
//
//   - a chat has at most one migration: none, under way (no result yet) or done
//     (result set, the chat phaseMigrated); one that fails is forgotten, so another may
//     begin;
//   - while an export reads the chat (Exporting), no suspended turn resumes;
//   - each import of a run writes its pages under a lineage of its own (ImportLineage);
//   - the document the chat was restored from is recorded once and kept across runs
//     (Carry, Resume): a chat never takes a second document.
type transfers struct {
	// migration is the migration under way or done, if any (phaseMigrating,
	// phaseMigrated); nil again when one fails.
	migration *migration
	// exporting counts the exports reading the chat; no turn resumes meanwhile.
	exporting int
	// imports counts the imports begun in this run: each writes pages of a lineage of
	// its own ("<run id>-i<n>").
	imports int
	// restored records the document the chat was restored from (nil: none); it is
	// wire.Carried.Restored, which stays nil in chatState's Carried.
	restored *wire.CarriedRestore
}

// Resume takes over the restored document a previous run carried (Carry).
func (t *transfers) Resume(restored *wire.CarriedRestore) {
	if restored != nil {
		r := *restored
		t.restored = &r
	}
}

// Carry is what the next run takes (wire.Carried.Restored): the restored document's
// record, nil when there is none. A migration, export or import does not cross a
// continue-as-new: the run drains them first.
func (t *transfers) Carry() *wire.CarriedRestore {
	if t.restored == nil {
		return nil
	}
	r := *t.restored
	return &r
}

// State fills State's fields of the transfers: the restored document's digest and
// repairs, and the migration under way or where the chat went.
func (t *transfers) State(r *wire.StateResult) {
	if t.restored != nil {
		r.RestoredDigest, r.Repairs = t.restored.Digest, t.restored.Repairs
	}
	if m := t.migration; m != nil {
		if m.result != nil {
			loc := m.result.Target
			r.MigratedTo = &loc
		} else {
			r.Migration = &wire.MigrationState{Target: m.target, Phase: m.step}
		}
	}
}

// MigratedTo is where the chat went, nil until a migration is done.
func (t *transfers) MigratedTo() *wire.ChatLocation {
	if m := t.migration; m != nil && m.result != nil {
		loc := m.result.Target
		return &loc
	}
	return nil
}

// MigrationResult is a copy of the done migration's result, nil until one is done.
func (t *transfers) MigrationResult() *wire.MigrationResult {
	if m := t.migration; m != nil && m.result != nil {
		res := *m.result
		return &res
	}
	return nil
}

// MigrationTarget is where the migration under way or done goes; the zero location
// when there is none.
func (t *transfers) MigrationTarget() wire.ChatLocation {
	if t.migration == nil {
		return wire.ChatLocation{}
	}
	return t.migration.target
}

// Under returns the phase the migration under way or done interrupted (migration.under);
// false when there is no migration.
func (t *transfers) Under() (phase, bool) {
	if t.migration == nil {
		return 0, false
	}
	return t.migration.under, true
}

// MoveUnder moves the phase under the migration to p; a move phaseMoves does not list
// is refused and the phase stays. There must be a migration (Under).
func (t *transfers) MoveUnder(p phase) error {
	if err := checkMove(t.migration.under, p); err != nil {
		return err
	}
	t.migration.under = p
	return nil
}

// StartExport counts an export that reads the chat until release is called.
func (t *transfers) StartExport() (release func()) {
	t.exporting++
	return func() { t.exporting-- }
}

// Exporting reports whether an export reads the chat.
func (t *transfers) Exporting() bool { return t.exporting > 0 }

// ImportLineage counts an import begun in run runID and returns the lineage its pages
// are written under ("<run id>-i<n>", n from 1).
func (t *transfers) ImportLineage(runID string) string {
	t.imports++
	return fmt.Sprintf("%s-i%d", runID, t.imports)
}
