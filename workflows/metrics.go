package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// The chat's metrics, through the worker's Temporal metrics handler
// (workflow.GetMetricsHandler: nothing is recorded while replaying), beside the SDK's
// own temporal_* metrics. Each carries the SDK's tags (namespace, task queue, workflow
// type).
const (
	// TurnLatencyMetric is a turn's time from when it was taken to when it was answered,
	// failed or suspended for approvals (a timer; tag outcome = answered | failed |
	// suspended).
	TurnLatencyMetric = "agentchat_turn_latency"
	// QueueDepthMetric is the number of turns queued behind the active one (a gauge, set
	// when a turn is queued or taken).
	QueueDepthMetric = "agentchat_queue_depth"
	// FailedTurnsMetric counts failed turns by the error's type (a counter; tag
	// error_type, a wire.ErrType…).
	FailedTurnsMetric = "agentchat_turns_failed"
)

// queueDepth records the queue's length.
func (s *chatState) queueDepth(ctx workflow.Context) {
	workflow.GetMetricsHandler(ctx).Gauge(QueueDepthMetric).Update(float64(s.turnQueue.Len()))
}

// timeTurn records the queue depth as t is taken and returns the function that records
// its latency and, if it failed, its error type.
func (s *chatState) timeTurn(ctx workflow.Context, t *turn) func() {
	s.queueDepth(ctx)
	start := workflow.Now(ctx)
	return func() {
		h := workflow.GetMetricsHandler(ctx)
		outcome := "answered"
		switch {
		case t.suspended:
			outcome = "suspended"
		case t.err != nil:
			outcome = "failed"
			typ := "unknown"
			if s.LastError != nil && s.LastError.MessageID == t.msg.MessageID {
				typ = s.LastError.Type
			}
			h.WithTags(map[string]string{"error_type": typ}).Counter(FailedTurnsMetric).Inc(1)
		}
		h.WithTags(map[string]string{"outcome": outcome}).Timer(TurnLatencyMetric).Record(workflow.Now(ctx).Sub(start))
	}
}
