package serve

import (
	"context"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/telemetry"
)

// SetupTelemetry sets OpenTelemetry up from the environment (telemetry.Setup, service
// name agentchat-worker, Prometheus at metricsListen when set) and wires it into the
// worker's Temporal client (the tracing interceptor, the SDK's metrics) and activities
// (model and tool call spans and metrics; message content as
// telemetry.CaptureContentFromEnv says). Off when the environment sets nothing; the
// caller shuts it down after the worker stops.
func SetupTelemetry(ctx context.Context, dial *agentchat.DialOptions, opts *Options, metricsListen string) (*telemetry.Telemetry, error) {
	tel, err := telemetry.Setup(ctx, telemetry.Options{ServiceName: "agentchat-worker", MetricsListen: metricsListen})
	if err != nil {
		return nil, err
	}
	interceptors, err := tel.Interceptors()
	if err != nil {
		_ = tel.Shutdown(ctx)
		return nil, err
	}
	dial.Interceptors = append(dial.Interceptors, interceptors...)
	if h := tel.TemporalMetricsHandler(); h != nil {
		dial.MetricsHandler = h
	}
	if tel.Tracing {
		opts.TracerProvider = tel.TracerProvider
	}
	if tel.Metrics {
		opts.MeterProvider = tel.MeterProvider
	}
	opts.CaptureContent = opts.CaptureContent || telemetry.CaptureContentFromEnv()
	return tel, nil
}
