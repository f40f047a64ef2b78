package integration_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/offline"
)

// toolConfig has one agent with one tool.
const toolConfig = `
tools:
  stock: {description: "How many of an item are in stock", parameters: {type: object, properties: {item: {type: string}}}}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [stock], call: {initialInterval: 50ms, maxAttempts: 4}}
`

// tracedHarness is a harness whose client, worker and activities record their spans in
// the returned recorder and their metrics in the returned reader.
func tracedHarness(t *testing.T, capture bool) (*testenv.Harness, *tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	h := testenv.New(t, testenv.Options{Config: toolConfig, TracerProvider: tp, MeterProvider: mp, CaptureContent: capture,
		Tools: map[string]activities.ToolFunc{"stock": func(context.Context, json.RawMessage) (string, error) {
			return "3 teapots in stock", nil
		}},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "stock", Arguments: `{"item":"teapot"}`}}}, {},
		}}},
	})
	return h, rec, reader
}

// spanTree indexes ended spans by id.
type spanTree map[trace.SpanID]sdktrace.ReadOnlySpan

func (st spanTree) parent(s sdktrace.ReadOnlySpan) (sdktrace.ReadOnlySpan, bool) {
	p, ok := st[s.Parent().SpanID()]
	return p, ok
}

// under reports whether s descends from anc.
func (st spanTree) under(s, anc sdktrace.ReadOnlySpan) bool {
	for p, ok := st.parent(s); ok; p, ok = st.parent(p) {
		if p.SpanContext().SpanID() == anc.SpanContext().SpanID() {
			return true
		}
	}
	return false
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// named returns the ended spans of trace id named name.
func named(spans []sdktrace.ReadOnlySpan, id trace.TraceID, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanContext().TraceID() == id && s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// A turn with a tool call is one trace: the client's update, the workflow's handler of
// it, and under it each activity (InvokeAgent twice, CallTool once), the model call spans
// with the GenAI conventions' attributes and their HTTP spans, and the tool call's span.
// Message content stays out of the spans unless opted in.
func TestTraceOfATurnWithAToolCall(t *testing.T) {
	h, rec, _ := tracedHarness(t, false)
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, h, id, "t1", "Is the teapot in stock?")
	require.Len(t, res.Messages, 3)

	var update sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if strings.HasSuffix(s.Name(), "Workflow:SendMessage") && s.SpanKind() == trace.SpanKindClient {
			update = s
		}
	}
	require.NotNil(t, update, "the client's SendMessage update span")
	spans, tree := rec.Ended(), spanTree{}
	for _, s := range spans {
		tree[s.SpanContext().SpanID()] = s
	}
	tid := update.SpanContext().TraceID()
	one := func(name string) sdktrace.ReadOnlySpan {
		t.Helper()
		got := named(spans, tid, name)
		require.Len(t, got, 1, "span %q in the turn's trace", name)
		return got[0]
	}
	handler := one("HandleUpdate:SendMessage")
	assert.True(t, tree.under(handler, update), "the workflow's handler runs under the client's update")

	invokes := named(spans, tid, "RunActivity:InvokeAgent")
	require.Len(t, invokes, 2, "the call and the answer after the tool result")
	models := named(spans, tid, "chat offline")
	require.Len(t, models, 2)
	for i, m := range models {
		p, ok := tree.parent(m)
		require.True(t, ok)
		assert.Equal(t, "RunActivity:InvokeAgent", p.Name())
		assert.True(t, tree.under(m, handler), "model call %d is in the turn's handler", i)
		a := attrs(m)
		assert.Equal(t, "chat", a["gen_ai.operation.name"].AsString())
		assert.Equal(t, "openai", a["gen_ai.provider.name"].AsString())
		assert.Equal(t, "offline", a["gen_ai.request.model"].AsString())
		assert.Equal(t, "offline", a["gen_ai.response.model"].AsString())
		assert.Positive(t, a["gen_ai.usage.input_tokens"].AsInt64())
		assert.Positive(t, a["gen_ai.usage.output_tokens"].AsInt64())
		assert.Equal(t, "clerk", a["gen_ai.agent.id"].AsString())
		assert.Equal(t, id, a["gen_ai.conversation.id"].AsString())
		assert.Equal(t, "t1", a["agentchat.turn.id"].AsString())
		assert.NotContains(t, a, attribute.Key("gen_ai.input.messages"), "content only when opted in")
		assert.NotContains(t, a, attribute.Key("gen_ai.output.messages"))
		var http []string
		for _, s := range spans {
			if p, ok := tree.parent(s); ok && p.SpanContext().SpanID() == m.SpanContext().SpanID() {
				http = append(http, s.Name())
				assert.Equal(t, "POST", attrs(s)["http.request.method"].AsString())
			}
		}
		assert.Len(t, http, 1, "the model's HTTP call under the model call span")
	}
	reasons := func(s sdktrace.ReadOnlySpan) []string {
		return attrs(s)["gen_ai.response.finish_reasons"].AsStringSlice()
	}
	assert.ElementsMatch(t, [][]string{{"tool_calls"}, {"stop"}}, [][]string{reasons(models[0]), reasons(models[1])})

	tool := one("execute_tool stock")
	p, ok := tree.parent(tool)
	require.True(t, ok)
	assert.Equal(t, "RunActivity:CallTool", p.Name())
	assert.True(t, tree.under(tool, handler))
	a := attrs(tool)
	assert.Equal(t, "execute_tool", a["gen_ai.operation.name"].AsString())
	assert.Equal(t, "stock", a["gen_ai.tool.name"].AsString())
	assert.Equal(t, "c1", a["gen_ai.tool.call.id"].AsString())
	assert.Equal(t, "clerk", a["gen_ai.agent.id"].AsString())
	assert.Equal(t, id, a["gen_ai.conversation.id"].AsString())
	assert.NotContains(t, a, attribute.Key("gen_ai.tool.call.arguments"))
}

// Opted in, the model call spans carry the messages and the tool span its arguments
// and result.
func TestTraceCapturesContentWhenOptedIn(t *testing.T) {
	h, rec, _ := tracedHarness(t, true)
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	send(t, h, id, "t1", "Is the teapot in stock?")
	var model, tool sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "chat offline":
			model = s
		case "execute_tool stock":
			tool = s
		}
	}
	require.NotNil(t, model)
	require.NotNil(t, tool)
	assert.Contains(t, attrs(model)["gen_ai.input.messages"].AsString(), "Is the teapot in stock?")
	assert.NotEmpty(t, attrs(model)["gen_ai.output.messages"].AsString())
	assert.Equal(t, `{"item":"teapot"}`, attrs(tool)["gen_ai.tool.call.arguments"].AsString())
	assert.Equal(t, "3 teapots in stock", attrs(tool)["gen_ai.tool.call.result"].AsString())
}

// The gen_ai.client.* histograms count the turn's model calls and their tokens, the
// same tokens State totals; the Temporal SDK's own metrics and the turn metrics come
// through the same meter provider.
func TestMetricsOfATurn(t *testing.T) {
	h, _, reader := tracedHarness(t, false)
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	send(t, h, id, "t1", "Is the teapot in stock?")
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.NotNil(t, st.Usage)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	found := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			found[m.Name] = m.Data
		}
	}
	tokens, ok := found["gen_ai.client.token.usage"].(metricdata.Histogram[int64])
	require.True(t, ok, "gen_ai.client.token.usage histogram; have %v", keys(found))
	byType := map[string]int64{}
	for _, dp := range tokens.DataPoints {
		v, _ := dp.Attributes.Value("gen_ai.token.type")
		byType[v.AsString()] += dp.Sum
	}
	assert.Equal(t, int64(st.Usage.InputTokens), byType["input"])
	assert.Equal(t, int64(st.Usage.OutputTokens), byType["output"])
	dur, ok := found["gen_ai.client.operation.duration"].(metricdata.Histogram[float64])
	require.True(t, ok, "gen_ai.client.operation.duration histogram")
	var n uint64
	for _, dp := range dur.DataPoints {
		n += dp.Count
	}
	assert.Equal(t, uint64(2), n, "two model calls")
	for _, name := range []string{"temporal_request", "temporal_activity_execution_latency", "agentchat_turn_latency", "agentchat_queue_depth"} {
		assert.Contains(t, found, name)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A failed turn counts in agentchat_turns_failed under its error's type, the one State
// reports, and the failed model call's duration carries error.type.
func TestMetricsOfAFailedTurn(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	h := testenv.New(t, testenv.Options{MeterProvider: mp,
		Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {{Status: 400, Message: "no such model"}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t1", Text: "Hello"})
	require.Error(t, err)
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.NotNil(t, st.LastError)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var failed map[string]int64
	var callErrors []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				if m.Name == "agentchat_turns_failed" {
					failed = map[string]int64{}
					for _, dp := range data.DataPoints {
						v, _ := dp.Attributes.Value("error_type")
						failed[v.AsString()] += dp.Value
					}
				}
			case metricdata.Histogram[float64]:
				if m.Name == "gen_ai.client.operation.duration" {
					for _, dp := range data.DataPoints {
						if v, ok := dp.Attributes.Value("error.type"); ok {
							callErrors = append(callErrors, v.AsString())
						}
					}
				}
			}
		}
	}
	assert.Equal(t, map[string]int64{st.LastError.Type: 1}, failed)
	assert.Equal(t, []string{"ModelRequestRejected"}, callErrors)
}

// With encryption on, no message content reaches a span even when the environment asks
// for it (the GenAI conventions' capture-content setting): the spans leave the worker
// in plain text, where the chat's content must not go.
func TestTraceCapturesNoContentWhenEncrypted(t *testing.T) {
	f, err := keyring.Generate("k1")
	require.NoError(t, err)
	ring, err := keyring.New(f)
	require.NoError(t, err)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := testenv.New(t, testenv.Options{Config: toolConfig, TracerProvider: tp, CaptureContent: true, Keys: ring,
		Tools: map[string]activities.ToolFunc{"stock": func(context.Context, json.RawMessage) (string, error) {
			return "3 teapots in stock", nil
		}},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "stock", Arguments: `{"item":"teapot"}`}}}, {},
		}}},
	})
	id := testenv.ChatID(t)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	send(t, h, id, "t1", "Is the teapot in stock?")
	spans := rec.Ended()
	require.NotEmpty(t, spans)
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			v := kv.Value.Emit()
			assert.NotContains(t, v, "teapot", "span %q attribute %s", s.Name(), kv.Key)
		}
	}
}
