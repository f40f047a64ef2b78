package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
)

// BenchmarkTurnTracing times a turn with a tool call (a new chat, one SendMessage:
// model call, tool call, model call) on the real server, without OpenTelemetry and
// with tracing and metrics on (every span exported in batches to a no-op exporter,
// metrics aggregated for a reader). The goal is "on" within 1.1x of "off".
//
//	go test -run='^$' -bench=TurnTracing -benchtime=30x ./integration
func BenchmarkTurnTracing(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[traced]
		b.Run(name, func(b *testing.B) {
			opts := testenv.Options{Config: toolConfig,
				Tools: map[string]activities.ToolFunc{"stock": func(context.Context, json.RawMessage) (string, error) {
					return "3 teapots in stock", nil
				}},
				Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
					{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "stock", Arguments: `{"item":"teapot"}`}}}, {},
				}}},
			}
			if traced {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
				opts.TracerProvider, opts.MeterProvider = tp, mp
			}
			h := testenv.New(b, opts)
			ctx := context.Background()
			n := 0
			for b.Loop() {
				id := fmt.Sprintf("%s-%d", testenv.ChatID(b), n)
				n++
				_, err := h.Client.Start(ctx, agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
				require.NoError(b, err)
				res, err := h.Client.Send(ctx, id, agentchat.SendMessageInput{MessageID: "t1", Text: "Is the teapot in stock?"})
				require.NoError(b, err)
				require.Len(b, res.Messages, 3)
			}
		})
	}
}
