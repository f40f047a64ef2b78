package agentchat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/agentchat/agentchat/wire"
)

// ListPageSize is ListOptions.PageSize's default, and MaxListPageSize its most.
const (
	ListPageSize    = 100
	MaxListPageSize = 1000
)

// ListOptions filter and page Client.List. Zero values list every chat of the
// client's task queue, ListPageSize at a time.
type ListOptions struct {
	// Status keeps the chats of this status (wire.Status*: "running", "completed",
	// "failed", "migrating", "migrated"; or a closed run's "terminated", "timedOut",
	// "canceled"). "" keeps all.
	Status string
	// Agent keeps the chats with this participant; it needs the search attributes.
	Agent string
	// TaskQueue lists the chats of this task queue; "" means the client's.
	TaskQueue string
	// PageSize is how many chats a page holds at most; 0 means ListPageSize, and more
	// than MaxListPageSize is refused.
	PageSize int
	// PageToken continues a listing where ListResult.NextPageToken left it.
	PageToken []byte
}

// ChatSummary is one chat as Temporal's visibility knows it: the latest run of its
// workflow. Agents, Turns and LastActivity come from the chat's search attributes, and
// are empty for a chat without them (Indexed false).
type ChatSummary struct {
	ChatID string `json:"chatId"`
	RunID  string `json:"runId"`
	// Status is the chat's (wire.Status*), or the run's when it closed otherwise
	// ("terminated", "timedOut", "canceled"; "failed" for a failed run).
	Status    string    `json:"status"`
	Agents    []string  `json:"agents,omitempty"`
	Turns     int       `json:"turns"`
	StartTime time.Time `json:"startTime"`
	// LastActivity is when the chat last took a turn or changed status; without the
	// search attributes, the run's close time, else its start.
	LastActivity time.Time `json:"lastActivity"`
	TaskQueue    string    `json:"taskQueue"`
	// Indexed: the chat carries the search attributes.
	Indexed bool `json:"indexed"`
}

// ListResult is one page of Client.List.
type ListResult struct {
	Chats []ChatSummary `json:"chats"`
	// NextPageToken continues the listing (ListOptions.PageToken); nil after the last
	// page.
	NextPageToken []byte `json:"nextPageToken,omitempty"`
	// Unindexed: the namespace lacks the chats' search attributes, so no chat has
	// agents or turns; Hint says how to add them.
	Unindexed bool   `json:"unindexed,omitempty"`
	Hint      string `json:"hint,omitempty"`
}

// List returns a page of the namespace's chats (AgentChat workflows of the task queue,
// their latest runs), open chats first, newest first, from Temporal's visibility
// (ListWorkflowExecutions). Visibility lags a moment behind the chats: a chat
// started or a turn answered just now may not show yet. Errors: ErrInvalidOptions for
// an unknown status, a page size out of range, or Agent (or a status only the search
// attributes know: starting, migrating, migrated) in a namespace without the search
// attributes (the message says how to add them); the server's error otherwise.
func (c *Client) List(ctx context.Context, opts ListOptions) (ListResult, error) {
	size := opts.PageSize
	switch {
	case size == 0:
		size = ListPageSize
	case size < 0 || size > MaxListPageSize:
		return ListResult{}, fmt.Errorf("agentchat: list: %w: page size %d is not within 1..%d", ErrInvalidOptions, size, MaxListPageSize)
	}
	indexed := c.indexed(ctx)
	query, err := listQuery(opts, cmpOr(opts.TaskQueue, c.taskQueue), indexed, c.namespace)
	if err != nil {
		return ListResult{}, err
	}
	resp, err := c.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: c.namespace,
		PageSize: int32(size), NextPageToken: opts.PageToken, Query: query})
	if err != nil {
		if ns := c.noNamespace("list chats", err); ns != nil {
			return ListResult{}, ns
		}
		return ListResult{}, fmt.Errorf("agentchat: list chats: %w", err)
	}
	res := ListResult{NextPageToken: resp.GetNextPageToken(), Chats: []ChatSummary{}}
	if len(res.NextPageToken) > 0 && len(resp.GetExecutions()) == int(size) {
		// A full page comes with a token whether or not more follow: look one ahead, so
		// that a token means a next page that is not empty.
		next, err := c.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: c.namespace,
			PageSize: 1, NextPageToken: res.NextPageToken, Query: query})
		if err == nil && len(next.GetExecutions()) == 0 {
			res.NextPageToken = nil
		}
	}
	if len(res.NextPageToken) == 0 {
		res.NextPageToken = nil
	}
	if !indexed {
		res.Unindexed = true
		res.Hint = "agents and turns are not indexed in namespace " + c.namespace +
			": run a worker (it registers the search attributes when the server lets it) or: " + SearchAttributesCommand(c.namespace)
	}
	for _, e := range resp.GetExecutions() {
		res.Chats = append(res.Chats, summarize(e))
	}
	return res, nil
}

// listQuery is the visibility query of opts on task queue queue.
func listQuery(opts ListOptions, queue string, indexed bool, ns string) (string, error) {
	q := []string{"WorkflowType = " + quoteQuery(wire.WorkflowType), "TaskQueue = " + quoteQuery(queue),
		"ExecutionStatus != 'ContinuedAsNew'"}
	needs := func(what string) error {
		return fmt.Errorf("agentchat: list: %w: %s needs the chats' search attributes, which namespace %q lacks (register them: %s)",
			ErrInvalidOptions, what, ns, SearchAttributesCommand(ns))
	}
	if opts.Agent != "" {
		if !indexed {
			return "", needs("a filter by agent")
		}
		q = append(q, wire.SearchAgents+" = "+quoteQuery(opts.Agent))
	}
	switch st := opts.Status; st {
	case "":
	case wire.StatusStarting, wire.StatusMigrating, wire.StatusMigrated:
		if !indexed {
			return "", needs("status " + st)
		}
		q = append(q, wire.SearchStatus+" = "+quoteQuery(st))
	case wire.StatusRunning, wire.StatusCompleted, wire.StatusFailed:
		exec := map[string]string{wire.StatusRunning: "Running", wire.StatusCompleted: "Completed", wire.StatusFailed: "Failed"}[st]
		if indexed { // a chat's own status where it has one, its run's otherwise
			q = append(q, fmt.Sprintf("(%s = %s OR (%s IS NULL AND ExecutionStatus = '%s'))",
				wire.SearchStatus, quoteQuery(st), wire.SearchStatus, exec))
			switch st {
			case wire.StatusRunning: // a run that ended otherwise is no running chat
				q = append(q, "ExecutionStatus = 'Running'")
			case wire.StatusFailed: // a run that failed, whatever its chat said last
				q[len(q)-1] = "(" + q[len(q)-1] + " OR ExecutionStatus = 'Failed')"
			}
		} else {
			q = append(q, "ExecutionStatus = '"+exec+"'")
		}
	case statusTerminated, statusTimedOut, statusCanceled:
		q = append(q, "ExecutionStatus = '"+map[string]string{statusTerminated: "Terminated",
			statusTimedOut: "TimedOut", statusCanceled: "Canceled"}[st]+"'")
	default:
		return "", fmt.Errorf("agentchat: list: %w: unknown status %q (one of %s)", ErrInvalidOptions, st, strings.Join(listStatuses, ", "))
	}
	return strings.Join(q, " AND "), nil
}

// The statuses of runs that ended other than by the chat's own choice.
const (
	statusTerminated = "terminated"
	statusTimedOut   = "timedOut"
	statusCanceled   = "canceled"
)

// listStatuses are the statuses ListOptions.Status takes.
var listStatuses = []string{wire.StatusStarting, wire.StatusRunning, wire.StatusCompleted, wire.StatusFailed,
	wire.StatusMigrating, wire.StatusMigrated, statusTerminated, statusTimedOut, statusCanceled}

// quoteQuery is s as a string literal of Temporal's visibility query language.
func quoteQuery(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// summarize is a chat summary of visibility's record of its latest run.
func summarize(e *workflowpb.WorkflowExecutionInfo) ChatSummary {
	cs := ChatSummary{ChatID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId(),
		StartTime: e.GetStartTime().AsTime().UTC(), TaskQueue: e.GetTaskQueue(), Status: runStatus(e.GetStatus())}
	cs.LastActivity = cs.StartTime
	if e.GetCloseTime() != nil {
		cs.LastActivity = e.GetCloseTime().AsTime().UTC()
	}
	attrs := e.GetSearchAttributes()
	var status string
	if attribute(attrs, wire.SearchStatus, &status) != nil {
		return cs
	}
	cs.Indexed = true
	if cs.Status == wire.StatusRunning || cs.Status == wire.StatusCompleted {
		cs.Status = status // the chat's own word: a run still open may be migrated
	}
	_ = attribute(attrs, wire.SearchAgents, &cs.Agents)
	var turns int64
	if attribute(attrs, wire.SearchTurns, &turns) == nil {
		cs.Turns = int(turns)
	}
	var last time.Time
	if attribute(attrs, wire.SearchLastActivity, &last) == nil && !last.IsZero() {
		cs.LastActivity = last.UTC()
	}
	return cs
}

// runStatus is a run's status in the words of ChatSummary.Status.
func runStatus(s enums.WorkflowExecutionStatus) string {
	switch s {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return wire.StatusRunning
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return wire.StatusCompleted
	case enums.WORKFLOW_EXECUTION_STATUS_FAILED:
		return wire.StatusFailed
	case enums.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return statusTerminated
	case enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return statusTimedOut
	case enums.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return statusCanceled
	}
	return strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

var errNoAttribute = errors.New("no such search attribute")

// attribute decodes search attribute name of attrs into v.
func attribute(attrs *commonpb.SearchAttributes, name string, v any) error {
	p, ok := attrs.GetIndexedFields()[name]
	if !ok {
		return errNoAttribute
	}
	return converter.GetDefaultDataConverter().FromPayload(p, v)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
