package agentchat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A worker that stopped a moment ago stays in the server's list of a task queue's
// pollers for up to a minute or two (pollerWindow), so that list cannot tell a live
// worker from a gone one. Every call that needs a worker therefore also has its own
// deadline of the client's WorkerWait: a query must be answered by then, an update
// accepted (the worker has taken it), and else the call fails with ErrNoWorker,
// saying what it left behind.

// errNotTaken is the cause a call's context is cancelled with when no worker took its
// task within the wait; the call then returns a notTaken, which matches it (errors.Is).
var errNotTaken = errors.New("no worker took the task")

// notTaken is errNotTaken with how long the call waited: the server may give up on a
// query sooner than the client's WorkerWait (after about 10 s), and errors say how long
// the call really waited.
type notTaken struct{ waited time.Duration }

func (e notTaken) Error() string        { return errNotTaken.Error() }
func (e notTaken) Is(target error) bool { return target == errNotTaken }

// waitedFor is how long the call that returned err (a notTaken) waited; def when err
// does not say.
func waitedFor(err error, def time.Duration) time.Duration {
	var nt notTaken
	if errors.As(err, &nt) {
		return nt.waited
	}
	return def
}

// roundWait rounds d for an error message: whole seconds from one second on.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(10 * time.Millisecond)
}

// withWorker runs call (an update, or an update-with-start, with id updateID on chat
// chatID) and returns its error. When call has not returned after the client's
// WorkerWait, it asks the server whether the update was accepted by then (a worker
// ran its validator and took it); if not, call's context is cancelled and withWorker
// returns errNotTaken. Once accepted, call waits as long as ctx allows.
func (c *Client) withWorker(ctx context.Context, chatID, updateID string, call func(context.Context) error) error {
	began := time.Now()
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go func() { done <- call(cctx) }()
	timer := time.NewTimer(c.workerWait)
	defer timer.Stop()
	for {
		select {
		case err := <-done:
			if errors.Is(context.Cause(cctx), errNotTaken) {
				return notTaken{time.Since(began)}
			}
			return err
		case <-timer.C:
			if c.updateTaken(ctx, chatID, updateID) {
				continue // the timer has fired: from now on only done ends the wait
			}
			cancel(errNotTaken)
			<-done
			return notTaken{time.Since(began)}
		}
	}
}

// takenTimeout bounds updateTaken's look-up.
const takenTimeout = 5 * time.Second

// updateTaken reports whether update updateID of chat chatID's current run has been
// accepted or completed. The wait policy "admitted" makes the server answer at once
// with the stage the update has reached; an update it does not know (not admitted
// yet, or its run gone) was not taken. When the server cannot say (another error), it
// counts as taken, and the call waits on.
func (c *Client) updateTaken(ctx context.Context, chatID, updateID string) bool {
	ctx, cancel := context.WithTimeout(ctx, takenTimeout)
	defer cancel()
	resp, err := c.tc.WorkflowService().PollWorkflowExecutionUpdate(ctx, &workflowservice.PollWorkflowExecutionUpdateRequest{
		Namespace:  c.namespace,
		UpdateRef:  &updatepb.UpdateRef{WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: chatID}, UpdateId: updateID},
		WaitPolicy: &updatepb.WaitPolicy{LifecycleStage: enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED},
	})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false
	}
	if err != nil {
		return true // the server could not say: do not call the worker gone on that
	}
	return resp.GetStage() == enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED ||
		resp.GetStage() == enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED || resp.GetOutcome() != nil
}

// answeredInTime runs query, whose context is bounded by the client's WorkerWait. A
// query that a worker has not answered by then (or the server gave up on sooner), while
// ctx goes on, is a notTaken.
func (c *Client) answeredInTime(ctx context.Context, query func(context.Context) error) error {
	began := time.Now()
	qctx, cancel := context.WithTimeout(ctx, c.workerWait)
	defer cancel()
	err := query(qctx)
	if err != nil && endedBy(ctx, err) == nil && (qctx.Err() != nil || cutOff(err)) {
		return notTaken{time.Since(began)}
	}
	return err
}

// cutOff reports whether err is a call cancelled or timed out on the server's side
// ("stream terminated by RST_STREAM with error code: CANCEL"): the server gives up
// on a query no worker takes a little before the caller's deadline.
func cutOff(err error) bool {
	var canceled *serviceerror.Canceled
	var deadline *serviceerror.DeadlineExceeded
	if errors.As(err, &canceled) || errors.As(err, &deadline) {
		return true
	}
	code := status.Code(err)
	return code == codes.Canceled || code == codes.DeadlineExceeded
}

// noWorker is ErrNoWorker for task queue taskQueue, as CheckWorker words it: why says
// what was seen ("none polled it within 20s"), left what the call left behind
// ("" when nothing needs saying).
func (c *Client) noWorker(taskQueue, why, left string) error {
	if left != "" {
		left = "; " + left
	}
	ns := "" // the worker's default namespace
	if c.namespace != "default" {
		ns = " --namespace " + c.namespace
	}
	return fmt.Errorf("%w %q in namespace %q (%s); start one: go run ./worker --offline%s --task-queue %s "+
		"(or, with a worker running, check that it uses this namespace and task queue)%s",
		ErrNoWorker, taskQueue, c.namespace, why, ns, taskQueue, left)
}

// chatNoWorker is noWorker for a call (verb, as "send to") on existing chat chatID,
// on the chat's task queue; cause is the call's error: a notTaken says how long it
// waited, and the server's "no poller seen" that no worker polled lately.
func (c *Client) chatNoWorker(ctx context.Context, verb, chatID, left string, cause error) error {
	tq := c.taskQueue
	if d, err := c.tc.DescribeWorkflowExecution(ctx, chatID, ""); err == nil && d.GetWorkflowExecutionInfo().GetTaskQueue() != "" {
		tq = d.GetWorkflowExecutionInfo().GetTaskQueue()
	}
	why := fmt.Sprintf("none answered within %s, though one polled it lately: it has stopped", roundWait(waitedFor(cause, c.workerWait)))
	if noPollerSeen(cause) {
		why = "none has polled it lately"
	}
	return fmt.Errorf("agentchat: %s chat %q: %w", verb, chatID, c.noWorker(tq, why, left))
}

// deletionNote says what a deletion (DeleteWorkflowExecution) leaves for a while: the
// server removes the run in the background, and list shows it until then (measured on
// the dev server: 25 to 55 s).
const deletionNote = "the server removes it in the background: list may show it for a minute, and its id is free once it is gone"

// deleteRun deletes run run of chat id (DeleteWorkflowExecution: a running one is
// terminated first; the server removes it in the background, deletionNote).
func (c *Client) deleteRun(ctx context.Context, id, run string) error {
	_, err := c.tc.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace:         c.namespace,
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: run},
	})
	return err
}

// startNoWorker is noWorker for a start of chat id (through op, made at began) that
// no worker took: the chat it created, which holds only its input, is deleted when no
// worker ever took a task of it, so nothing is left and the id is free; otherwise the
// error names it. A chat whose workers took its first task but could not open its
// input (other keys) is ErrKeyMismatch instead (discardIfKeysDiffer).
func (c *Client) startNoWorker(ctx context.Context, id string, op client.WithStartWorkflowOperation, began time.Time) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	why := fmt.Sprintf("none took the chat's first task within %s", roundWait(time.Since(began)))
	left := fmt.Sprintf("the chat was created and waits for a worker, which starts it when it comes (or delete it: temporal workflow delete --workflow-id %s)", id)
	run, err := c.createdRun(dctx, id, op, began)
	if err != nil || run == "" {
		return fmt.Errorf("agentchat: start chat %q: %w", id, c.noWorker(c.taskQueue, why, left))
	}
	if !c.untouched(dctx, id, run) {
		if c.keys != nil && c.runKeyTrouble(dctx, id, run) {
			return c.discardIfKeysDiffer(ctx, id, op, began, errors.New("the workers failed the chat's first task"))
		}
		return fmt.Errorf("agentchat: start chat %q: %w", id, c.noWorker(c.taskQueue, why, left))
	}
	err = c.deleteRun(dctx, id, run)
	if err == nil {
		left = "nothing is left: the chat it created was deleted (" + deletionNote + ")"
	}
	return fmt.Errorf("agentchat: start chat %q: %w", id, c.noWorker(c.taskQueue, why, left))
}

// createdRun returns the run id of the chat op started at began; "" when the start
// did not get as far as the server.
func (c *Client) createdRun(ctx context.Context, id string, op client.WithStartWorkflowOperation, began time.Time) (string, error) {
	// op's result is set once the server answered the start: probe it without waiting.
	probe, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	run, err := op.Get(probe)
	cancel()
	if err == nil {
		return run.GetRunID(), nil
	}
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return "", nil // the id is another chat's
	}
	// The start was cut off with the call: the id's current run is the one it created
	// when it began after this call did (the server's clock may be a little behind).
	d, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return "", err
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStartTime().AsTime().Before(began.Add(-2 * time.Second)) {
		return "", nil
	}
	return info.GetExecution().GetRunId(), nil
}

// untouched reports whether no worker ever took a workflow task of run run of chat
// id: its history holds no started workflow task.
func (c *Client) untouched(ctx context.Context, id, run string) bool {
	it := c.tc.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return false
		}
		if startedTask(ev) {
			return false
		}
	}
	return true
}

func startedTask(ev *historypb.HistoryEvent) bool {
	return ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED
}

// didNothing reports whether run run of chat id holds nothing but its start, workflow
// tasks and its failure: it failed before it did anything, so nothing of it is lost
// when its id is used again.
func (c *Client) didNothing(ctx context.Context, id, run string) bool {
	it := c.tc.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	failed := false
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return false
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
			enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
			enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
			failed = true
		default:
			return false
		}
	}
	return failed
}

// noPollerSeen reports whether err is the server's refusal of a query for a task queue
// that no worker polled for a while (its words, as it gives no type for it).
func noPollerSeen(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no poller seen for task queue")
}
