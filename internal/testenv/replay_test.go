package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func TestScrubIdentitiesReachesNestedFields(t *testing.T) {
	hist := &historypb.History{Events: []*historypb.HistoryEvent{
		{Attributes: &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{
			WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{Identity: "123@host@"}}},
		{Attributes: &historypb.HistoryEvent_WorkflowTaskScheduledEventAttributes{
			WorkflowTaskScheduledEventAttributes: &historypb.WorkflowTaskScheduledEventAttributes{
				TaskQueue: &taskqueuepb.TaskQueue{Name: "host:uuid", Kind: enumspb.TASK_QUEUE_KIND_STICKY}}}},
		{Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
			ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				TaskQueue: &taskqueuepb.TaskQueue{Name: "agentchat", Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
				Header:    &commonpb.Header{Fields: map[string]*commonpb.Payload{"k": {Data: []byte("identity")}}}}}},
	}}
	scrubIdentities(hist.ProtoReflect())
	assert.Equal(t, CaptureIdentity, hist.Events[0].GetWorkflowTaskStartedEventAttributes().GetIdentity())
	assert.Equal(t, CaptureIdentity+":sticky", hist.Events[1].GetWorkflowTaskScheduledEventAttributes().GetTaskQueue().GetName())
	a := hist.Events[2].GetActivityTaskScheduledEventAttributes()
	assert.Equal(t, "agentchat", a.GetTaskQueue().GetName(), "a normal task queue keeps its name")
	assert.Equal(t, "identity", string(a.GetHeader().GetFields()["k"].GetData()), "only fields named identity change")
}

func TestScrubTextReplacesTheWorkerNamedInMessagesAndPayloads(t *testing.T) {
	ev := &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_ActivityTaskFailedEventAttributes{
		ActivityTaskFailedEventAttributes: &historypb.ActivityTaskFailedEventAttributes{Failure: &failurepb.Failure{
			Message: "asked 1 worker(s): worker 123@host@ knows \"helper\"",
			FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{
				Details: &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: []byte(`{"worker":"123@host@"}`)}}}}}}}}}
	scrubText(ev.ProtoReflect(), "123@host@")
	f := ev.GetActivityTaskFailedEventAttributes().GetFailure()
	assert.Equal(t, "asked 1 worker(s): worker "+CaptureIdentity+" knows \"helper\"", f.GetMessage())
	assert.Equal(t, `{"worker":"`+CaptureIdentity+`"}`, string(f.GetApplicationFailureInfo().GetDetails().GetPayloads()[0].GetData()))
}

func TestWalkMessagesStopsBelowARefusedMessage(t *testing.T) {
	ev := &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
		ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
			Input:  &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: []byte("in a list")}}},
			Header: &commonpb.Header{Fields: map[string]*commonpb.Payload{"k": {Data: []byte("in a map")}}}}}}
	var seen []string
	WalkMessages(ev.ProtoReflect(), func(m protoreflect.Message) bool {
		if p, ok := m.Interface().(*commonpb.Payload); ok {
			seen = append(seen, string(p.GetData()))
		}
		_, payloads := m.Interface().(*commonpb.Payloads)
		return !payloads
	})
	assert.Equal(t, []string{"in a map"}, seen)
}
