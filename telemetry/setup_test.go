package telemetry

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

// clearEnv unsets every variable Setup reads, for the test.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", CaptureContentEnv} {
		t.Setenv(k, "")
	}
}

// Which signals the environment turns on; nothing without it.
func TestSetupFollowsTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name             string
		env              map[string]string
		tracing, metrics bool
	}{
		{"unset", nil, false, false},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}, false, false},
		{"console traces", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true, false},
		{"console metrics", map[string]string{"OTEL_METRICS_EXPORTER": "console"}, false, true},
		{"an OTLP endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, true, true},
		{"an OTLP endpoint, traces off", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1",
			"OTEL_TRACES_EXPORTER": "none"}, false, true},
		{"a traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tel, err := Setup(context.Background(), Options{ServiceName: "test"})
			require.NoError(t, err)
			defer func() { _ = tel.Shutdown(context.Background()) }()
			assert.Equal(t, tc.tracing, tel.Tracing)
			assert.Equal(t, tc.metrics, tel.Metrics)
			is, err := tel.Interceptors()
			require.NoError(t, err)
			assert.Equal(t, tc.tracing, len(is) == 1, "the tracing interceptor only when tracing")
			assert.Equal(t, tc.metrics, tel.TemporalMetricsHandler() != nil)
		})
	}
}

func TestSetupRefusesBadSettings(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkinish")
	_, err := Setup(context.Background(), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OTEL_TRACES_EXPORTER")

	clearEnv(t)
	_, err = Setup(context.Background(), Options{MetricsListen: "127.0.0.1:notaport"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--metrics-listen")
}

func TestCaptureContentFromEnv(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "1": false, "true": true, "TRUE": true} {
		t.Setenv(CaptureContentEnv, v)
		assert.Equal(t, want, CaptureContentFromEnv(), "%q", v)
	}
}

func TestErrorType(t *testing.T) {
	assert.Equal(t, "ModelUnavailable", ErrorType(fmt.Errorf("x: %w", temporal.NewApplicationError("m", "ModelUnavailable"))))
	assert.Equal(t, "timeout", ErrorType(fmt.Errorf("x: %w", context.DeadlineExceeded)))
	assert.Equal(t, "canceled", ErrorType(context.Canceled))
	assert.Equal(t, "_OTHER", ErrorType(errors.New("boom")))
}
