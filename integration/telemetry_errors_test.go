package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// Healthy turns leave no span with status Error, in any trace: not the client's calls,
// the workflow's handlers, the activities, the model and tool calls, nor the calls the
// worker makes for itself (the model call's followers query, its publish signals,
// cancelled when the reply ends first). Turns of every shape: a tool round, quick
// replies nobody follows (the model answers at once), a slow one nobody follows, and
// a streamed one (SendStream: polls and publish signals).
func TestHealthyTurnsTraceNoErrorSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	slow := offline.Reply{Text: strings.Repeat("word ", 12), ChunkDelay: wire.Duration(40 * time.Millisecond)}
	h := testenv.New(t, testenv.Options{Config: toolConfig, TracerProvider: tp,
		Tools: map[string]activities.ToolFunc{"stock": func(context.Context, json.RawMessage) (string, error) {
			return "3 teapots in stock", nil
		}},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "stock", Arguments: `{"item":"teapot"}`}}}, {},
			{}, {}, {}, {}, slow, slow,
		}}},
	})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	send(t, h, id, "t1", "Is the teapot in stock?")
	for i := 2; i <= 5; i++ {
		send(t, h, id, fmt.Sprintf("t%d", i), "And now?")
	}
	send(t, h, id, "t6", "Tell me slowly.")
	var deltas int
	for ev, err := range h.Client.SendStream(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t7", Text: "Stream it."}) {
		require.NoError(t, err)
		if ev.Type == wire.EventTextDelta {
			deltas++
		}
	}
	require.Positive(t, deltas, "the streamed turn's text came as deltas")

	// The worker's own calls may end after the turn's answer: wait until every span
	// but the workflows' own (open while the chat runs) has ended.
	open := func() []string {
		ended := map[string]bool{}
		for _, s := range rec.Ended() {
			ended[s.SpanContext().SpanID().String()] = true
		}
		var out []string
		for _, s := range rec.Started() {
			if !ended[s.SpanContext().SpanID().String()] && !strings.HasPrefix(s.Name(), "RunWorkflow:") {
				out = append(out, s.Name())
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(open()) == 0 }, 10*time.Second, 50*time.Millisecond,
		"spans still open: %v", open())

	names := map[string]int{}
	for _, s := range rec.Ended() {
		names[s.Name()]++
		if s.Status().Code == codes.Error {
			t.Errorf("span %q (kind %s) has status Error: %s", s.Name(), s.SpanKind(), s.Status().Description)
		}
	}
	for _, want := range []string{"UpdateWorkflow:SendMessage", "HandleUpdate:SendMessage", "RunActivity:InvokeAgent",
		"chat offline", "RunActivity:CallTool", "execute_tool stock", "UpdateWorkflow:" + wire.StreamPollUpdate,
		"SignalWorkflow:" + wire.StreamPublishSignal} {
		assert.Positive(t, names[want], "span %q among the turns' spans; have %v", want, names)
	}
}
