// Package telemetry sets up OpenTelemetry for agentchat's worker, command line and
// clients, and names what agentchat records.
//
// Setup reads the standard OpenTelemetry environment (OTEL_TRACES_EXPORTER,
// OTEL_METRICS_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, …; see
// go.opentelemetry.io/contrib/exporters/autoexport) and is off when none of it is set.
// TemporalInterceptor traces Temporal calls (the client's update, the workflow, each
// activity) with Temporal's own OpenTelemetry interceptor; TemporalMetrics hands the
// Temporal SDK's metrics to OpenTelemetry. The activities record a span per model call
// and per tool call, and the gen_ai.client.* metrics, by the OpenTelemetry semantic
// conventions for generative AI (https://opentelemetry.io/docs/specs/semconv/gen-ai/),
// with the attribute and metric names of this package.
package telemetry
