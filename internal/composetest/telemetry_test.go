package composetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The worker exports its traces and metrics over OTLP to the collector, whose config
// (mounted from the repository) sends traces to Jaeger: every pipeline names
// receivers and exporters the config defines, and the traces exporter names the
// jaeger service's OTLP port.
func TestComposeExportsTelemetryToTheCollector(t *testing.T) {
	c := loadCompose(t)
	require.Contains(t, c.Services, "otel-collector")
	require.Contains(t, c.Services, "jaeger")
	w := c.Services["worker"]
	assert.Equal(t, "http://otel-collector:4318", w.Environment["OTEL_EXPORTER_OTLP_ENDPOINT"])
	assert.Equal(t, "otlp", w.Environment["OTEL_TRACES_EXPORTER"])
	assert.Equal(t, "otlp", w.Environment["OTEL_METRICS_EXPORTER"])
	assert.NotEmpty(t, w.Environment["OTEL_SERVICE_NAME"])
	assert.Contains(t, w.dependencies(t), "otel-collector")
	assert.Contains(t, c.Services["jaeger"].Ports, "16686:16686", "the trace viewer's UI")

	col := c.Services["otel-collector"]
	var mounted string
	for _, v := range col.Volumes {
		if parts := strings.Split(v, ":"); len(parts) >= 2 && parts[1] == "/etc/otelcol-contrib/config.yaml" {
			mounted = parts[0]
		}
	}
	require.NotEmpty(t, mounted, "the collector mounts its config")
	b, err := os.ReadFile(filepath.Join(repoRoot(t), mounted))
	require.NoError(t, err)
	var cfg struct {
		Receivers  map[string]any `json:"receivers"`
		Processors map[string]any `json:"processors"`
		Exporters  map[string]struct {
			Endpoint string `json:"endpoint"`
		} `json:"exporters"`
		Service struct {
			Pipelines map[string]struct {
				Receivers  []string `json:"receivers"`
				Processors []string `json:"processors"`
				Exporters  []string `json:"exporters"`
			} `json:"pipelines"`
		} `json:"service"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	require.Contains(t, cfg.Service.Pipelines, "traces")
	require.Contains(t, cfg.Service.Pipelines, "metrics")
	for name, p := range cfg.Service.Pipelines {
		for _, r := range p.Receivers {
			assert.Contains(t, cfg.Receivers, r, "pipeline %s", name)
		}
		for _, pr := range p.Processors {
			assert.Contains(t, cfg.Processors, pr, "pipeline %s", name)
		}
		for _, e := range p.Exporters {
			assert.Contains(t, cfg.Exporters, e, "pipeline %s", name)
		}
	}
	var toJaeger bool
	for _, e := range cfg.Service.Pipelines["traces"].Exporters {
		toJaeger = toJaeger || cfg.Exporters[e].Endpoint == "jaeger:4317"
	}
	assert.True(t, toJaeger, "traces go to the jaeger service's OTLP gRPC port")
}
