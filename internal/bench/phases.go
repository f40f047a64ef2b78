package bench

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
)

// turnPhases are the parts of each turn as the server's event history times them.
type turnPhases struct {
	// accept: from the workflow task that took the update being scheduled to the
	// activity being scheduled (the update accepted, the turn begun).
	accept []time.Duration
	// activity: from the activity being scheduled to its completion (for agentchat, the
	// model call with its history read and heartbeat).
	activity []time.Duration
	// dispatch and run split activity: scheduled to started (the task reaching a
	// worker), and started to completed (the activity function and its result's trip).
	dispatch, run []time.Duration
	// reply: from the activity's completion to the update's completion (a workflow task
	// on the worker, then the server).
	reply []time.Duration
}

// phases reads a workflow's event history and times the phases of every turn after
// the first skip: each turn is an accepted update that schedules one activity and
// completes after it.
func (e *Env) phases(ctx context.Context, workflowID string, skip int) (turnPhases, error) {
	var (
		p                                turnPhases
		wftScheduled, actScheduled, done time.Time
		actStarted                       time.Time
		inTurn                           bool
		n                                int
	)
	it := e.Temporal.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return turnPhases{}, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		at := ev.GetEventTime().AsTime()
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			if !inTurn {
				wftScheduled = at
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			inTurn, actScheduled, actStarted, done = true, time.Time{}, time.Time{}, time.Time{}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if inTurn && actScheduled.IsZero() {
				actScheduled = at
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if inTurn && actStarted.IsZero() {
				actStarted = at
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if inTurn && done.IsZero() {
				done = at
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
			if inTurn && !actScheduled.IsZero() && !done.IsZero() && n >= skip {
				p.accept = append(p.accept, actScheduled.Sub(wftScheduled))
				p.activity = append(p.activity, done.Sub(actScheduled))
				if !actStarted.IsZero() {
					p.dispatch = append(p.dispatch, actStarted.Sub(actScheduled))
					p.run = append(p.run, done.Sub(actStarted))
				}
				p.reply = append(p.reply, at.Sub(done))
			}
			inTurn = false
			n++
		}
	}
	return p, nil
}
