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
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/workflows"
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
	for _, i := range r.chatOrder() {
		c := r.chats[i]
		for {
			st, err := r.w.Client(c.loc.ns).State(ctx, c.loc.id)
			if err != nil {
				r.violate("chat c%d (%s): State while settling: %v", c.idx, c.loc.id, err)
				break
			}
			if len(st.PendingApprovals) > 0 && st.ActiveTurn == "" {
				r.logf("settle c%d: %s", c.idx, r.decide(ctx, c, st.PendingApprovals[0], true))
				continue
			}
			if st.ActiveTurn == "" && len(st.PendingTurns) == 0 && st.Status != workflows.StatusMigrating {
				break
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
	cl := r.w.Client(c.loc.ns)
	name := fmt.Sprintf("chat c%d (%s/%s)", c.idx, r.w.Namespaces[c.loc.ns], c.loc.id)
	h, err := cl.History(ctx, c.loc.id, agentchat.HistoryInput{})
	if err != nil {
		r.violate("%s: History: %v", name, err)
		return
	}
	st, err := cl.State(ctx, c.loc.id)
	if err != nil {
		r.violate("%s: State: %v", name, err)
		return
	}
	for _, v := range checkHistory(c, h.Messages) {
		r.violate("%s: %s", name, v)
	}
	for _, v := range checkState(st, h.Messages) {
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
			old, err := r.w.Client(l.ns).State(ctx, l.id)
			if err != nil || old.Status != workflows.StatusMigrated {
				r.violate("%s: the source %s of a migration is %q (%v), not %q", name, l.id, old.Status, err, workflows.StatusMigrated)
			}
		}
	}
	for _, v := range r.checkTransfer(ctx, c, h.Messages) {
		r.violate("%s: %s", name, v)
	}
}

// checkHistory checks that no turn is lost or repeated: message ids are unique, each
// turn's replies follow it as "<turn>/<n>" and end with an agent's answer, every
// accepted messageId is answered once, none refused or failed is there, and the order
// of the turns is the order they were accepted.
func checkHistory(c *chatRun, msgs []chat.Message) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.MessageID] {
			out = append(out, fmt.Sprintf("message id %q appears twice", m.MessageID))
		}
		seen[m.MessageID] = true
	}
	turns := splitTurns(msgs)
	for _, t := range turns {
		for _, m := range t.replies {
			if !strings.HasPrefix(m.MessageID, t.user.MessageID+"/") {
				out = append(out, fmt.Sprintf("message %q (%s) inside turn %q", m.MessageID, m.Role, t.user.MessageID))
			}
		}
		if len(t.replies) == 0 {
			out = append(out, fmt.Sprintf("turn %q has no reply", t.user.MessageID))
			continue
		}
		if m := c.msgs[t.user.MessageID]; m != nil && m.outcome == outFailedAfterTools {
			if last := t.replies[len(t.replies)-1]; last.Role != chat.RoleTool {
				out = append(out, fmt.Sprintf("turn %q failed after its tools ran but ends with %s message %q, not their results", t.user.MessageID, last.Role, last.MessageID))
			}
		} else if last := t.replies[len(t.replies)-1]; last.Role != chat.RoleAssistant || last.Text() == "" {
			out = append(out, fmt.Sprintf("turn %q ends with %s message %q, not an agent's answer", t.user.MessageID, last.Role, last.MessageID))
		}
	}
	if len(msgs) < len(c.prefix) || !equal(ids(msgs[:len(c.prefix)]), c.prefix) {
		out = append(out, fmt.Sprintf("the history does not start with the %d messages of the imported document", len(c.prefix)))
		return out
	}
	count := map[string]int{}
	group := 0
	for _, t := range turns {
		id := t.user.MessageID
		if t.index < len(c.prefix) {
			continue
		}
		count[id]++
		m, ok := c.msgs[id]
		switch {
		case ok:
			if m.group < group {
				out = append(out, fmt.Sprintf("turn %q (accepted in step group %d) answered after a turn of group %d", id, m.group, group))
			}
			group = max(group, m.group)
			if m.outcome == outAnswered && !m.posted && len(m.replies) > 0 && !equal(ids(t.replies), m.replies) {
				out = append(out, fmt.Sprintf("turn %q holds replies %v; Send returned %v", id, ids(t.replies), m.replies))
			}
		case slices.Contains(c.pending, id):
		default:
			out = append(out, fmt.Sprintf("turn %q was never sent", id))
		}
	}
	for _, id := range c.order {
		m, n := c.msgs[id], count[id]
		switch {
		case n > 1:
			out = append(out, fmt.Sprintf("turn %q (%s) is in the history %d times", id, m.outcome, n))
		case (m.outcome == outAnswered || m.outcome == outSuspended) && n == 0:
			out = append(out, fmt.Sprintf("turn %q was %s but is not in the history (lost)", id, m.outcome))
		case m.outcome == outFailedAfterTools && n != 1:
			out = append(out, fmt.Sprintf("turn %q failed after its tools ran, so its message and their results stay, but it is in the history %d times", id, n))
		case (m.outcome == outRefused || m.outcome == outFailed) && n > 0:
			out = append(out, fmt.Sprintf("turn %q was %s but is in the history", id, m.outcome))
		case m.outcome == outPosted && n == 0 && m.size <= c.limit && !c.hasFailing():
			out = append(out, fmt.Sprintf("posted turn %q (%d bytes, limit %d) is not in the history (lost)", id, m.size, c.limit))
		case m.outcome == outPosted && n == 1 && m.size > c.limit:
			out = append(out, fmt.Sprintf("posted turn %q of %d bytes is in the history; the limit is %d", id, m.size, c.limit))
		}
	}
	for _, id := range c.pending {
		if count[id] == 0 && !c.hasFailing() {
			out = append(out, fmt.Sprintf("the document's pending turn %q was never answered", id))
		}
	}
	return out
}

// turnOf is a user message and the messages after it up to the next user message.
type turnOf struct {
	index   int // of the user message in the history
	user    chat.Message
	replies []chat.Message
}

func splitTurns(msgs []chat.Message) []turnOf {
	var out []turnOf
	for i, m := range msgs {
		switch {
		case m.Role == chat.RoleUser:
			out = append(out, turnOf{index: i, user: m})
		case len(out) > 0:
			out[len(out)-1].replies = append(out[len(out)-1].replies, m)
		}
	}
	return out
}

func ids(msgs []chat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

// checkState checks that State agrees with History and that the settled chat is idle
// and well.
func checkState(st agentchat.StateResult, msgs []chat.Message) []string {
	var out []string
	if st.MessageCount != len(msgs) {
		out = append(out, fmt.Sprintf("State counts %d messages, History has %d", st.MessageCount, len(msgs)))
	}
	if len(msgs) > 0 && (st.LastMessage == nil || st.LastMessage.MessageID != msgs[len(msgs)-1].MessageID) {
		out = append(out, fmt.Sprintf("State's last message is not History's last (%q)", msgs[len(msgs)-1].MessageID))
	}
	if st.Status != workflows.StatusRunning {
		out = append(out, fmt.Sprintf("status %q, want %q", st.Status, workflows.StatusRunning))
	}
	if st.ActiveTurn != "" || len(st.PendingTurns) > 0 || len(st.PendingApprovals) > 0 {
		out = append(out, fmt.Sprintf("not idle after settling: active %q, pending %v, approvals %v", st.ActiveTurn, st.PendingTurns, st.PendingApprovals))
	}
	if e := st.LastError; e != nil && e.Type != agents.ErrTypeInvalidMessage && !strings.Contains(e.Message, Refusal) {
		out = append(out, fmt.Sprintf("lastError %s on %q is not the script's refusal: %s", e.Type, e.MessageID, firstLine(e.Message)))
	}
	return out
}

// checkToolResults checks that every recording tool's result in the history comes from
// exactly one real execution.
func checkToolResults(c *chatRun, msgs []chat.Message, perCall map[string]int) []string {
	var out []string
	for _, m := range msgs {
		for _, ct := range m.Contents {
			if ct.Type != chat.ContentFunctionResult || !strings.HasPrefix(ct.Result, "recorded ") {
				continue
			}
			if n := perCall[fmt.Sprintf("c%d/%s", c.idx, ct.CallID)]; n != 1 && !slices.Contains(c.prefix, m.MessageID) {
				out = append(out, fmt.Sprintf("tool result of call %s in %q, but the tool ran %d times", ct.CallID, m.MessageID, n))
			}
		}
	}
	return out
}

// benignTaskFailures are the workflow task failure causes that are part of normal
// operation (a signal arriving during a task, a sticky worker gone); any other means the
// workflow code failed or Temporal refused what it did.
var benignTaskFailures = map[enumspb.WorkflowTaskFailedCause]bool{
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND:                       true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_STICKY_TASK_QUEUE:                 true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND:                     true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND:                  true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNSPECIFIED:                             false,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_PENDING_NEXUS_OPERATIONS_LIMIT_EXCEEDED: false,
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
	opts := agentchat.ImportOptions{ChatID: id, MaxMessageBytes: c.maxBytes}
	if len(doc) > workflows.InlineLimit {
		opts.Path = filepath.Join(r.w.Dir, "exports", id+".json")
		if err := os.MkdirAll(filepath.Dir(opts.Path), 0o755); err != nil {
			return []string{err.Error()}
		}
		if err := os.WriteFile(opts.Path, doc, 0o600); err != nil {
			return []string{err.Error()}
		}
	} else {
		opts.Document = doc
	}
	if _, err := cl.Import(ctx, opts); err != nil {
		return []string{fmt.Sprintf("final import (%d bytes, %d messages): %v", len(doc), len(d.History), err)}
	}
	h, err := cl.History(ctx, id, agentchat.HistoryInput{})
	if err != nil {
		return []string{fmt.Sprintf("History of the final import: %v", err)}
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
	for i, n := range perChat {
		c := r.chats[i]
		if bound := requestsPerTurn * (len(c.msgs) + len(c.pending) + 4); n > bound {
			r.violate("chat c%d made %d model requests, more than %d for its %d turns (a loop)", i, n, bound, len(c.msgs))
		}
	}
}
