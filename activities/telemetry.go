package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/telemetry"
	"github.com/agentchat/agentchat/wire"
)

// recorder returns the recorder of t's model and tool call spans and metrics. Spans
// leave the worker in plain text: when encrypted (Config.Keys set), no content goes
// into them, whatever CaptureContent asks.
func (t TelemetryConfig) recorder(encrypted bool) (*telemetry.Recorder, error) {
	rec, err := telemetry.NewRecorder(t.TracerProvider, t.MeterProvider, t.CaptureContent && !encrypted)
	if err != nil {
		return nil, fmt.Errorf("activities: telemetry: %w", err)
	}
	return rec, nil
}

// traced returns hc with a span per model HTTP request, child of the call's, when t
// has a TracerProvider; else hc itself.
func (t TelemetryConfig) traced(hc *http.Client) *http.Client {
	if t.TracerProvider == nil {
		return hc
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(t.TracerProvider),
		otelhttp.WithMeterProvider(orNoopMeter(t.MeterProvider)))
	return &c
}

func orNoopMeter(mp metric.MeterProvider) metric.MeterProvider {
	if mp == nil {
		return metricnoop.NewMeterProvider()
	}
	return mp
}

// finishKey carries a *[]string through a model call's context: the Chat Completions
// paths append the choices' finish reasons to it, for the call's span.
type finishKey struct{}

// noteFinish appends reason to the call's finish reasons, if ctx collects them.
func noteFinish(ctx context.Context, reason string) {
	if p, ok := ctx.Value(finishKey{}).(*[]string); ok && reason != "" {
		*p = append(*p, reason)
	}
}

// operationOf is the GenAI conventions' operation of an agent kind's call: "chat" for
// Chat Completions and Responses, "invoke_agent" for an Assistants run (a remote agent).
func operationOf(k wire.Kind) string {
	if k == wire.KindAssistant {
		return "invoke_agent"
	}
	return "chat"
}

// tracedInvoke runs invoke (one agent reply) inside a model call span with its
// gen_ai.* attributes and records the gen_ai.client.* metrics.
func (m *models) tracedInvoke(ctx context.Context, def agents.Definition, in wire.InvokeInput, history []chat.Message,
	invoke func(ctx context.Context) (wire.InvokeResult, error)) (wire.InvokeResult, error) {
	var finish []string
	ctx = context.WithValue(ctx, finishKey{}, &finish)
	ctx, span := m.telemetry.StartModelCall(ctx, telemetry.ModelCall{
		Operation: operationOf(def.Kind), RequestModel: def.Model, AgentID: def.ID, AgentName: def.Name,
		ChatID: in.ChatID, TurnID: in.TurnID, BaseURL: m.baseURLs[def.Endpoint],
		Input: func() string { return contentJSON(history) },
	})
	res, err := invoke(ctx)
	if err == nil && len(finish) == 0 { // Responses and Assistants: from the reply
		finish = []string{"stop"}
		if slices.ContainsFunc(res.Contents, func(c chat.Content) bool { return c.Type == chat.ContentFunctionCall }) {
			finish = []string{"tool_calls"}
		}
	}
	logCall(ctx, res, err)
	span.End(telemetry.ModelResult{ResponseModel: res.Model, Usage: res.Usage, Cost: res.Cost, FinishReasons: finish,
		Output: func() string { return contentJSON([]chat.Message{{Role: chat.RoleAssistant, Contents: res.Contents}}) }}, err)
	return res, err
}

// contentJSON is messages as JSON, for a span that captures content.
func contentJSON(msgs []chat.Message) string {
	b, err := json.Marshal(msgs)
	if err != nil {
		return ""
	}
	return string(b)
}
