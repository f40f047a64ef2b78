package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	promexporter "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Options shape Setup.
type Options struct {
	// ServiceName is service.name when OTEL_SERVICE_NAME (or service.name in
	// OTEL_RESOURCE_ATTRIBUTES) does not set it, e.g. "agentchat-worker".
	ServiceName string
	// MetricsListen, when set, serves the metrics in the Prometheus text format at
	// http://<MetricsListen>/metrics (host:port; ":9464" listens on every interface),
	// whatever OTEL_METRICS_EXPORTER says.
	MetricsListen string
}

// Telemetry is what Setup made: providers to hand to the worker and clients, and
// Shutdown. Its providers are no-ops for the signals the environment leaves off.
type Telemetry struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Tracing and Metrics report whether each signal is exported.
	Tracing, Metrics bool
	// MetricsAddr is where the Prometheus endpoint listens, when it does.
	MetricsAddr string

	shutdown []func(context.Context) error
}

// Setup builds the tracer and meter providers the environment asks for and makes them
// OpenTelemetry's global providers, with the W3C trace-context and baggage propagator.
//
// Traces are exported when OTEL_TRACES_EXPORTER names an exporter other than "none"
// ("otlp", "console") or, when it is unset, when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (OTLP, OTEL_EXPORTER_OTLP_PROTOCOL, default
// http/protobuf); metrics likewise with OTEL_METRICS_EXPORTER ("otlp", "console",
// "prometheus") and OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, and always with MetricsListen.
// With nothing set, nothing is exported and the providers are no-ops, so telemetry
// costs nothing.
//
// Errors: an unknown exporter name, a bad OTLP protocol or endpoint, a MetricsListen
// address that cannot be listened on.
func Setup(ctx context.Context, opts Options) (*Telemetry, error) {
	t := &Telemetry{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()}
	res, err := newResource(ctx, opts.ServiceName)
	if err != nil {
		return nil, err
	}
	if tracesOn() {
		exp, err := autoexport.NewSpanExporter(ctx)
		if err != nil {
			return nil, fmt.Errorf("telemetry: traces exporter (OTEL_TRACES_EXPORTER): %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		t.TracerProvider, t.Tracing = tp, true
		t.shutdown = append(t.shutdown, tp.Shutdown)
	}
	var readers []sdkmetric.Option
	if metricsOn() {
		r, err := autoexport.NewMetricReader(ctx)
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, fmt.Errorf("telemetry: metrics exporter (OTEL_METRICS_EXPORTER): %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(r))
	}
	if opts.MetricsListen != "" {
		r, stop, addr, err := prometheusEndpoint(opts.MetricsListen)
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, err
		}
		readers = append(readers, sdkmetric.WithReader(r))
		t.shutdown, t.MetricsAddr = append(t.shutdown, stop), addr
	}
	if len(readers) > 0 {
		mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		t.MeterProvider, t.Metrics = mp, true
		t.shutdown = append(t.shutdown, mp.Shutdown)
	}
	otel.SetTracerProvider(t.TracerProvider)
	otel.SetMeterProvider(t.MeterProvider)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return t, nil
}

// Shutdown flushes what is buffered (spans, the last metrics) and stops the exporters
// and the Prometheus endpoint; ctx bounds how long it waits.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for i := len(t.shutdown) - 1; i >= 0; i-- {
		errs = append(errs, t.shutdown[i](ctx))
	}
	t.shutdown = nil
	return errors.Join(errs...)
}

// tracesOn reports whether the environment asks for traces (see Setup).
func tracesOn() bool {
	return signalOn("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
}

// metricsOn reports whether the environment asks for exported metrics (see Setup).
func metricsOn() bool {
	return signalOn("OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
}

func signalOn(exporterEnv, endpointEnv string) bool {
	if v := strings.TrimSpace(os.Getenv(exporterEnv)); v != "" {
		return v != "none"
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv(endpointEnv) != ""
}

// newResource is the SDK's default resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// the SDK's own attributes) with service.name defaulting to name.
func newResource(ctx context.Context, name string) (*resource.Resource, error) {
	var base []resource.Option
	if name != "" {
		base = append(base, resource.WithAttributes(semconv.ServiceName(name)))
	}
	// Later detectors win: the environment overrides the default name.
	res, err := resource.New(ctx, append(base, resource.WithTelemetrySDK(), resource.WithFromEnv())...)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	return res, nil
}

// prometheusEndpoint serves a Prometheus exporter's registry at http://addr/metrics.
func prometheusEndpoint(addr string) (sdkmetric.Reader, func(context.Context) error, string, error) {
	reg := prometheus.NewRegistry()
	reader, err := promexporter.New(promexporter.WithRegisterer(reg))
	if err != nil {
		return nil, nil, "", fmt.Errorf("telemetry: Prometheus exporter: %w", err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, "", fmt.Errorf("telemetry: metrics endpoint (--metrics-listen %s): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() { _ = srv.Serve(lis) }()
	return reader, srv.Shutdown, lis.Addr().String(), nil
}
