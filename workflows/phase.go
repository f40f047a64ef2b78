package workflows

import (
	"fmt"
	"slices"

	"github.com/agentchat/agentchat/wire"
)

// phase is where a chat is in its lifecycle, in this run. Clients read it as
// StateResult.Status (phase.status). A continued run starts again at phaseStarting
// and takes the carry over: the phase is never carried.
//
// The moves (phaseMoves; chatState.to refuses any other):
//
//	from       to         when
//	starting   running    the start validated the input, resolved the participants, restored a document or took the carry over
//	starting   failed     the start failed (bad input, unknown agent, bad document)
//	starting   migrating  a Migrate is admitted while the chat starts: the start goes on under the migration
//	running    importing  an Import loads a document into the empty chat
//	importing  running    the import ended, loaded or refused
//	importing  migrating  a Migrate is admitted while an import runs: the migration waits for it
//	running    draining   the run hands over to a new one (continue-as-new)
//	draining   running    the hand-over stalled: what it would carry passes CarryLimit (stall)
//	draining   migrating  only in runs that admitted a Migrate while draining (before
//	                      validateMigrate refused it with ContinuingAsNew): the drain goes on under it
//	running    migrating  a Migrate is admitted: the migration waits for the turn in flight
//	running    completed  closed: the termination strategy completed the chat (no autoReset), or a temporary thread had its turn
//	migrating  migrated   the target started from the exported document
//	migrating  failed     the start under the migration failed; the chat stays failed, whatever the migration does
//	migrating  running    the migration failed: back to the phase under it
//	migrating  draining   (the same)
//	migrating  completed  (the same)
//	migrating  starting   (the same: it failed before the start under it ended)
//
// Failed, completed and migrated are final; draining ends the run (continue-as-new).
// While a migration is under way, the phase it interrupted goes on under it
// (migration.under): a start or an import that ends, or a chat that completes, moves
// that phase (chatState.settle), by the same table, and a failed migration returns to it.
type phase uint8

const (
	phaseStarting  phase = iota // validating the input, resolving participants, restoring
	phaseRunning                // taking turns
	phaseImporting              // an Import loads a document; no turn runs
	phaseDraining               // continuing as new: new updates refused (retryably), accepted turns answered
	phaseMigrating              // moving to another namespace or cluster; takes no turns
	phaseMigrated               // moved: late turns are forwarded, then the run ends
	phaseCompleted              // takes no more turns (closed)
	phaseFailed                 // could not start; chatState.failure says why
)

// phaseMoves lists, for each phase, the phases it may move to (the table above).
var phaseMoves = map[phase][]phase{
	phaseStarting:  {phaseRunning, phaseFailed, phaseMigrating},
	phaseRunning:   {phaseImporting, phaseDraining, phaseMigrating, phaseCompleted},
	phaseImporting: {phaseRunning, phaseMigrating},
	phaseDraining:  {phaseMigrating, phaseRunning},
	phaseMigrating: {phaseMigrated, phaseFailed, phaseRunning, phaseDraining, phaseCompleted, phaseStarting},
}

var phaseNames = [...]string{"starting", "running", "importing", "draining", "migrating", "migrated", "completed", "failed"}

func (p phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", p)
}

// continuedStart reports whether the run is starting from a previous run's carry:
// the carry was taken over before the handlers were registered (resumeEarly), so an
// update delivered with the run's first task (sent while the run before continued as
// new) finds the chat whole; its handler waits for the start to end, which it does in
// that same task.
func (s *chatState) continuedStart() bool {
	return s.phase == phaseStarting && s.in.Carry != nil
}

// status is the Status clients read in phase p: an import and a drain read "running".
func (p phase) status() string {
	switch p {
	case phaseStarting:
		return wire.StatusStarting
	case phaseMigrating:
		return wire.StatusMigrating
	case phaseMigrated:
		return wire.StatusMigrated
	case phaseCompleted:
		return wire.StatusCompleted
	case phaseFailed:
		return wire.StatusFailed
	}
	return wire.StatusRunning
}

// checkMove returns nil when phaseMoves lets from move to to, else an error naming both.
func checkMove(from, to phase) error {
	if slices.Contains(phaseMoves[from], to) {
		return nil
	}
	return fmt.Errorf("workflows: no move from phase %s to %s", from, to)
}

// to moves the chat to phase p. A move phaseMoves does not list is refused: the phase
// stays, and the error says which move.
func (s *chatState) to(p phase) error {
	if err := checkMove(s.phase, p); err != nil {
		return fmt.Errorf("chat %q: %w", s.chatID, err)
	}
	s.phase = p
	return nil
}

// settle moves the phase that runs to p: the chat's, or, while a migration is under
// way, the phase under it (which the migration returns to if it fails). A move
// phaseMoves does not list is refused as by to.
func (s *chatState) settle(p phase) error {
	if _, ok := s.transfers.Under(); s.phase != phaseMigrating || !ok {
		return s.to(p)
	}
	if err := s.transfers.MoveUnder(p); err != nil {
		return fmt.Errorf("chat %q, under its migration: %w", s.chatID, err)
	}
	return nil
}

// must logs a refused move the code makes only where phaseMoves lists it: a refusal
// there is a bug, and the phase stayed.
func (s *chatState) must(err error) {
	if err != nil {
		s.log().Error("refused phase move", "error", err)
	}
}

// base is the phase under a migration (under way or done), else the chat's phase.
func (s *chatState) base() phase {
	if under, ok := s.transfers.Under(); ok && (s.phase == phaseMigrating || s.phase == phaseMigrated) {
		return under
	}
	return s.phase
}

// draining reports whether the run hands over to a new one, with or without a
// migration admitted since.
func (s *chatState) draining() bool { return s.base() == phaseDraining }

// importing reports whether an Import loads a document, with or without a migration
// admitted since (which waits for it).
func (s *chatState) importing() bool { return s.base() == phaseImporting }
