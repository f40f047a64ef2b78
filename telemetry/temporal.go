package telemetry

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/agentchat/agentchat/wire"
)

// ScopeName is the instrumentation scope of agentchat's own spans and metrics.
const ScopeName = "github.com/agentchat/agentchat"

// TemporalInterceptor is Temporal's OpenTelemetry tracing interceptor on tp: the
// client's calls (start, update, signal, query) and, on a worker, the workflow, its
// handlers and each activity get spans, linked through Temporal's headers. Give it to
// the client (client.Options.Interceptors, agentchat.DialOptions.Interceptors): a worker
// built on that client runs it too. The workflow's spans are kept under wire.TraceSpanKey,
// so a turn's activities are children of the update that sent it.
func TemporalInterceptor(tp trace.TracerProvider) (interceptor.ClientInterceptor, error) {
	i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:         tp.Tracer(ScopeName + "/temporal"),
		SpanContextKey: wire.TraceSpanKey,
	})
	if err != nil {
		return nil, fmt.Errorf("telemetry: Temporal tracing interceptor: %w", err)
	}
	return i, nil
}

// TemporalMetrics hands the Temporal SDK's own metrics (temporal_request,
// temporal_workflow_task_execution_latency, temporal_activity_execution_latency, …) to
// mp (client.Options.MetricsHandler).
func TemporalMetrics(mp metric.MeterProvider) client.MetricsHandler {
	return temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{Meter: mp.Meter(ScopeName + "/temporal")})
}

// Interceptors returns the Temporal client interceptors for t: the tracing interceptor
// when t traces, none otherwise (a nil t is off).
func (t *Telemetry) Interceptors() ([]interceptor.ClientInterceptor, error) {
	if t == nil || !t.Tracing {
		return nil, nil
	}
	i, err := TemporalInterceptor(t.TracerProvider)
	if err != nil {
		return nil, err
	}
	return []interceptor.ClientInterceptor{i}, nil
}

// TemporalMetricsHandler is TemporalMetrics on t's meter provider when t exports
// metrics, nil otherwise.
func (t *Telemetry) TemporalMetricsHandler() client.MetricsHandler {
	if t == nil || !t.Metrics {
		return nil
	}
	return TemporalMetrics(t.MeterProvider)
}
