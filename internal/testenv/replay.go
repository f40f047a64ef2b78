package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// CaptureIdentity replaces the worker and client identities ("<pid>@<host>@…") and
// the sticky task queue names ("<host>:<uuid>") in saved histories, so that committed
// files name no machine. Replay uses neither.
const CaptureIdentity = "agentchat-replay-capture"

// idleTimeout bounds WaitIdle.
const idleTimeout = 30 * time.Second

// SaveHistory writes the event history of one run of workflowID (runID "" = the
// latest run) to path, creating its folder: JSON as `temporal workflow show --output
// json` writes it and worker.WorkflowReplayer's ReplayWorkflowHistoryFromJSONFile
// reads it, indented by two spaces, with host names replaced by CaptureIdentity. It
// checks that the file reads back (client.HistoryFromJSON) to the same events and
// returns the history.
func SaveHistory(t testing.TB, tc client.Client, workflowID, runID, path string) *historypb.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hist := &historypb.History{}
	it := tc.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err, "history of %s run %q", workflowID, runID)
		hist.Events = append(hist.Events, ev)
	}
	require.NotEmpty(t, hist.Events, "history of %s run %q", workflowID, runID)
	scrubIdentities(hist.ProtoReflect())
	if host, err := os.Hostname(); err == nil {
		scrubText(hist.ProtoReflect(), fmt.Sprintf("%d@%s@", os.Getpid(), host)) // this process's workers
	}

	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(t, err)
	b = append(b, '\n')
	back, err := client.HistoryFromJSON(bytes.NewReader(b), client.HistoryJSONOptions{})
	require.NoError(t, err, "the JSON of %s reads back", workflowID)
	require.True(t, proto.Equal(hist, back), "the JSON of %s reads back to the same %d events", workflowID, len(hist.Events))

	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return hist
}

// scrubIdentities sets every string field named "identity" in m, at any depth, and
// the name of every sticky task queue to CaptureIdentity.
func scrubIdentities(m protoreflect.Message) {
	WalkMessages(m, func(m protoreflect.Message) bool {
		if tq, ok := m.Interface().(*taskqueuepb.TaskQueue); ok && tq.GetKind() == enumspb.TASK_QUEUE_KIND_STICKY {
			tq.Name = CaptureIdentity + ":sticky"
			return false
		}
		m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			if fd.Name() == "identity" && fd.Kind() == protoreflect.StringKind && !fd.IsList() {
				m.Set(fd, protoreflect.ValueOfString(CaptureIdentity))
			}
			return true
		})
		return true
	})
}

// scrubText replaces identity, wherever a string or bytes field holds it (an error
// message or a payload that names the worker that answered), by CaptureIdentity.
func scrubText(m protoreflect.Message, identity string) {
	WalkMessages(m, func(m protoreflect.Message) bool {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() || fd.IsMap():
			case fd.Kind() == protoreflect.StringKind && strings.Contains(v.String(), identity):
				m.Set(fd, protoreflect.ValueOfString(strings.ReplaceAll(v.String(), identity, CaptureIdentity)))
			case fd.Kind() == protoreflect.BytesKind && bytes.Contains(v.Bytes(), []byte(identity)):
				m.Set(fd, protoreflect.ValueOfBytes(bytes.ReplaceAll(v.Bytes(), []byte(identity), []byte(CaptureIdentity))))
			}
			return true
		})
		return true
	})
}

// WalkMessages calls f on m and then, while f returns true for a message, on every
// message it holds (in singular fields, lists and map values), depth first.
func WalkMessages(m protoreflect.Message, f func(protoreflect.Message) bool) {
	if !f(m) {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				WalkMessages(v.List().Get(i).Message(), f)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				WalkMessages(mv.Message(), f)
				return true
			})
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			WalkMessages(v.Message(), f)
		}
		return true
	})
}

// WaitIdle waits until workflowID's latest run has neither a workflow task nor an
// activity pending (a closed run is idle), so that a history saved next ends at rest
// rather than in the middle of a task.
func WaitIdle(t testing.TB, tc client.Client, workflowID string) {
	t.Helper()
	var last string
	require.Eventually(t, func() bool {
		d, err := tc.DescribeWorkflowExecution(context.Background(), workflowID, "")
		if err != nil {
			last = err.Error()
			return false
		}
		if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return true
		}
		last = "workflow task or activities pending"
		return d.GetPendingWorkflowTask() == nil && len(d.GetPendingActivities()) == 0
	}, idleTimeout, 50*time.Millisecond, "%s never came to rest: %s", workflowID, last)
}

// DeleteIfExists terminates workflowID if it runs, then deletes its runs in namespace
// and reports whether the server answers NotFound for the id within wait, so that it
// can be started again whatever the starter's id reuse policy (agentchat.Client
// refuses the id of a closed chat). The server deletes in the background, at a low
// priority: a busy one may take longer. The earlier runs of a continue-as-new chain
// that visibility lists are deleted too, so that captures do not pile up (best effort).
func DeleteIfExists(t testing.TB, tc client.Client, namespace, workflowID string, wait time.Duration) bool {
	t.Helper()
	TerminateIfRunning(t, tc, workflowID)
	ctx := context.Background()
	if runs, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: namespace, Query: fmt.Sprintf("WorkflowId = %q", workflowID)}); err == nil {
		for _, r := range runs.GetExecutions() {
			_, _ = tc.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
				Namespace: namespace, WorkflowExecution: r.GetExecution()})
		}
	}
	asked := map[string]time.Time{} // run id → when its deletion was last asked
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		d, err := tc.DescribeWorkflowExecution(ctx, workflowID, "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			return true
		case time.Now().After(deadline):
			t.Logf("testenv: the server has not deleted %s within %s (last: %v)", workflowID, wait, err)
			return false
		case err == nil && time.Since(asked[d.GetWorkflowExecutionInfo().GetExecution().GetRunId()]) >= 5*time.Second:
			run := d.GetWorkflowExecutionInfo().GetExecution()
			asked[run.GetRunId()] = time.Now()
			_, _ = tc.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
				Namespace: namespace, WorkflowExecution: run})
		}
	}
}

// TerminateIfRunning ends workflowID's running run, if there is one, so that a test
// can reuse a fixed workflow id on a server that outlives it.
func TerminateIfRunning(t testing.TB, tc client.Client, workflowID string) {
	t.Helper()
	err := tc.TerminateWorkflow(context.Background(), workflowID, "", "testenv: fixed workflow id reused")
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		require.NoError(t, err, "terminate %s", workflowID)
	}
}
