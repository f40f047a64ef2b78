package systest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/wire"
)

// requestsPerTurn bounds the model requests one user turn may cause: rounds of tool
// calls, retries, two agents, a summary. A chat past requestsPerTurn × (its turns + 4)
// loops.
const requestsPerTurn = 60

// Settle waits until every chat of the round has no turn running or queued, approving
// every call that waits for a person, as a patient user would.
func (r *Runner) Settle(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	defer r.applyLate()
	for _, i := range r.chatOrder() {
		c := r.chats[i]
		for {
			st, err := r.state(ctx, c.loc)
			if err != nil {
				r.violate("chat c%d (%s): State while settling: %v", c.idx, c.loc.id, err)
				break
			}
			if len(st.PendingApprovals) > 0 && st.ActiveTurn == "" {
				r.logf("settle c%d: %s", c.idx, r.decide(ctx, c, st.PendingApprovals[0], true))
				continue
			}
			if st.ActiveTurn == "" && (len(st.PendingTurns) == 0 || stalled(st)) && st.Status != wire.StatusMigrating {
				break // a stalled chat keeps its queued turns for the chat it moves to
			}
			select {
			case <-ctx.Done():
				r.violate("chat c%d (%s): stuck: still %s with active turn %q, pending turns %v, approvals %v after %s",
					c.idx, c.loc.id, st.Status, st.ActiveTurn, st.PendingTurns, st.PendingApprovals, settleTimeout)
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// stalled reports whether st is a chat that takes no more turns because its message
// store refused its bodies.
func stalled(st agentchat.StateResult) bool {
	return st.LastError != nil && st.LastError.Type == wire.ErrTypeStoreRefused
}

// chatOrder is the round's chat indexes, in order.
func (r *Runner) chatOrder() []int {
	var out []int
	for i, c := range r.chats {
		if c.started {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// Check checks every invariant over the round's chats (after Settle) and returns the
// broken ones, with those found while acting.
func (r *Runner) Check(ctx context.Context) []string {
	if r.stopBg != nil {
		defer r.stopBg()
	}
	execs, err := readToolRecord(filepath.Join(r.w.Dir, toolFile))
	if err != nil {
		r.violate("tool record: %v", err)
	}
	roots := map[string]int{} // workflow id → chat index, over migrations
	for _, i := range r.chatOrder() {
		for _, l := range r.chats[i].locations {
			roots[l.id] = i
		}
	}
	perCall := map[string]int{}
	for _, e := range execs {
		if i, ok := roots[e.chat]; ok {
			perCall[fmt.Sprintf("c%d/%s", i, e.call)]++
		}
	}
	for key, n := range perCall {
		if n > 1 {
			r.violate("tool call %s ran %d times (at most once per call id)", key, n)
		}
	}
	for _, i := range r.chatOrder() {
		r.checkChat(ctx, r.chats[i], perCall)
	}
	r.checkModel(roots)
	if err := r.w.CheckFleet(); err != nil {
		r.violate("%v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.violations...)
}

// checkChat checks one chat: its History, its State, its workflows' close statuses,
// its tool results, and that it exports and imports.
func (r *Runner) checkChat(ctx context.Context, c *chatRun, perCall map[string]int) {
	name := fmt.Sprintf("chat c%d (%s/%s)", c.idx, r.w.Namespaces[c.loc.ns], c.loc.id)
	h, err := r.history(ctx, c.loc)
	if err != nil {
		r.violate("%s: History: %v", name, err)
		return
	}
	st, err := r.state(ctx, c.loc)
	if err != nil {
		r.violate("%s: State: %v", name, err)
		return
	}
	c.stalled = stalled(st)
	if c.stalled {
		r.logf("%s stalled: %s", name, firstLine(st.LastError.Message))
	}
	if c.refuses {
		if c.streamed, err = r.streamedTurns(ctx, c); err != nil {
			r.violate("%s: %v", name, err)
			return
		}
		for _, id := range c.order {
			if t := c.streamed[id]; t.failedByStore() {
				r.logf("%s: turn %q failed: the store refused a write (%s)", name, id, t.err.Type)
			}
		}
	}
	for _, v := range checkHistory(c, h.Messages) {
		r.violate("%s: %s", name, v)
	}
	for _, v := range checkState(c, st, h.Messages) {
		r.violate("%s: %s", name, v)
	}
	for _, v := range checkToolResults(c, h.Messages, perCall) {
		r.violate("%s: %s", name, v)
	}
	for i, l := range c.locations {
		last := i == len(c.locations)-1
		for _, v := range r.checkRuns(ctx, l, last) {
			r.violate("%s: workflow %s/%s: %s", name, r.w.Namespaces[l.ns], l.id, v)
		}
		if !last {
			old, err := r.state(ctx, l)
			if err != nil || old.Status != wire.StatusMigrated {
				r.violate("%s: the source %s of a migration is %q (%v), not %q", name, l.id, old.Status, err, wire.StatusMigrated)
			}
		}
	}
	for _, v := range r.checkTransfer(ctx, c, h.Messages) {
		r.violate("%s: %s", name, v)
	}
	for _, v := range r.checkMigration(ctx, c, h.Messages) {
		r.violate("%s: %s", name, v)
	}
}

// checkMigration migrates the settled chat to the other namespace under a new id (the
// last thing done to it): every chat can be migrated, and arrives whole.
func (r *Runner) checkMigration(ctx context.Context, c *chatRun, msgs []chat.Message) []string {
	to := location{1 - c.loc.ns, c.loc.id + "-fm"}
	res, err := r.w.Client(c.loc.ns).Migrate(ctx, c.loc.id, agentchat.MigrateOptions{ToNamespace: r.w.Namespaces[to.ns], ToChatID: to.id})
	if err != nil {
		return []string{fmt.Sprintf("final migration to %s/%s: %v", r.w.Namespaces[to.ns], to.id, err)}
	}
	h, err := r.history(ctx, to)
	if err != nil {
		return []string{fmt.Sprintf("History after the final migration: %v", err)}
	}
	if c.stalled && len(h.Messages) >= len(msgs) { // its queued turns may be answered there already
		h.Messages, res.MessageCount = h.Messages[:len(msgs)], len(msgs)
	}
	if !equal(ids(h.Messages), ids(msgs)) || res.MessageCount != len(msgs) {
		return []string{fmt.Sprintf("the final migration arrived with %d messages (result says %d), the source had %d",
			len(h.Messages), res.MessageCount, len(msgs))}
	}
	return nil
}

// benignTaskFailures are the workflow task failure causes that are part of normal
// operation (a signal arriving during a task, a sticky worker gone); any other means the
// workflow code failed or Temporal refused what it did.
var benignTaskFailures = map[enumspb.WorkflowTaskFailedCause]bool{
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND:       true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_STICKY_TASK_QUEUE: true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND:     true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND:  true,
}

// checkRuns walks every run of the workflow at l, newest first, and checks how each
// closed: continued as new or completed (a migrated source), or still running (the
// chat's current place only); never failed, terminated or timed out, and no workflow
// task failed for a reason other than the benign ones.
func (r *Runner) checkRuns(ctx context.Context, l location, current bool) []string {
	tc := r.w.Temporal(l.ns)
	var out []string
	runID := ""
	for n := 0; n < 1000; n++ {
		events, err := historyOf(ctx, tc, l.id, runID)
		if err != nil {
			return append(out, fmt.Sprintf("event history of run %q: %v", runID, err))
		}
		if len(events) == 0 {
			return append(out, fmt.Sprintf("run %q has no events", runID))
		}
		first, last := events[0], events[len(events)-1]
		for _, e := range events {
			if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil && !benignTaskFailures[a.GetCause()] {
				out = append(out, fmt.Sprintf("run %s: workflow task failed (%s): %s", shortRun(runID), a.GetCause(), firstLine(a.GetFailure().GetMessage())))
			}
		}
		switch last.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			if runID == "" {
				out = append(out, "the last run continued as new and has no successor")
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			if current {
				out = append(out, fmt.Sprintf("run %s completed; the chat should still take turns", shortRun(runID)))
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
			out = append(out, fmt.Sprintf("run %s FAILED: %s", shortRun(runID), firstLine(last.GetWorkflowExecutionFailedEventAttributes().GetFailure().GetMessage())))
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
			out = append(out, fmt.Sprintf("run %s TERMINATED: %s", shortRun(runID), last.GetWorkflowExecutionTerminatedEventAttributes().GetReason()))
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
			out = append(out, fmt.Sprintf("run %s closed as %s", shortRun(runID), last.GetEventType()))
		default:
			if !current || runID != "" {
				out = append(out, fmt.Sprintf("run %s is still open (last event %s)", shortRun(runID), last.GetEventType()))
			}
		}
		prev := first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if prev == "" {
			return out
		}
		runID = prev
	}
	return append(out, "more than 1000 runs")
}

func shortRun(id string) string {
	if id == "" {
		return "latest"
	}
	return id[:min(8, len(id))]
}

// historyOf reads the whole event history of one run ("" = the latest).
func historyOf(ctx context.Context, tc client.Client, id, runID string) ([]*historypb.HistoryEvent, error) {
	it := tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// checkTransfer exports the settled chat and imports the document into a new chat:
// every chat can be exported and imported, and both sides hold the same history.
func (r *Runner) checkTransfer(ctx context.Context, c *chatRun, msgs []chat.Message) []string {
	cl := r.w.Client(c.loc.ns)
	doc, _, err := cl.Export(ctx, c.loc.id)
	if err != nil {
		return []string{fmt.Sprintf("final export: %v", err)}
	}
	d, _, err := chatstate.Decode(doc)
	if err != nil {
		return []string{fmt.Sprintf("final export does not decode: %v", err)}
	}
	if !equal(ids(d.History), ids(msgs)) {
		return []string{fmt.Sprintf("the export holds %d messages, History %d (or in another order)", len(d.History), len(msgs))}
	}
	id := c.loc.id + "-final"
	opts, err := r.importOptions(doc, id, c.maxBytes)
	if err != nil {
		return []string{err.Error()}
	}
	if _, err := cl.Import(ctx, opts); err != nil {
		return []string{fmt.Sprintf("final import (%d bytes, %d messages): %v", len(doc), len(d.History), err)}
	}
	h, err := r.history(ctx, location{c.loc.ns, id})
	if err != nil {
		return []string{fmt.Sprintf("History of the final import: %v", err)}
	}
	if c.stalled && len(h.Messages) >= len(msgs) { // its queued turns may be answered there already
		h.Messages = h.Messages[:len(msgs)]
	}
	if !equal(ids(h.Messages), ids(msgs)) {
		return []string{fmt.Sprintf("the final import holds %d messages, the source %d", len(h.Messages), len(msgs))}
	}
	return nil
}

// toolExec is one line of the tool record.
type toolExec struct{ chat, call, tool string }

func readToolRecord(path string) ([]toolExec, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []toolExec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 3 {
			return out, fmt.Errorf("malformed line %q", sc.Text())
		}
		out = append(out, toolExec{parts[0], parts[1], parts[2]})
	}
	return out, sc.Err()
}

// checkModel checks the model requests of the round's chats: each is valid, and no
// chat made more than a bounded number (every loop is bounded).
func (r *Runner) checkModel(roots map[string]int) {
	var mine []ModelRequest
	perChat := map[int]int{}
	for _, q := range r.w.Model.Requests() {
		if i, ok := roots[q.Chat]; ok {
			mine = append(mine, q)
			perChat[i]++
		}
	}
	for _, v := range checkModelRequests(mine) {
		r.violate("model request: %s", v)
	}
	for _, v := range r.w.Model.Model.Violations() {
		if _, ok := roots[v.Chat]; ok {
			r.violate("model request: the strict offline model refused %s (agent %s, chat %s) with %d: %s", v.Path, v.Agent, v.Chat, v.Status, v.Error())
		}
	}
	for i, n := range perChat {
		c := r.chats[i]
		if bound := requestsPerTurn * (len(c.msgs) + len(c.pending) + 4); n > bound {
			r.violate("chat c%d made %d model requests, more than %d for its %d turns (a loop)", i, n, bound, len(c.msgs))
		}
	}
}
