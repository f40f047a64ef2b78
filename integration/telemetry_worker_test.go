package integration_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

// The worker command started with OTEL_TRACES_EXPORTER=console (the standard
// OpenTelemetry environment, nothing else) prints the spans of a turn, with the GenAI
// conventions' attributes on the model call, to its standard output; with
// --log-format json its log lines are JSON, and an activity's carry the chat id, run
// id, agent id and the turn's messageId; --metrics-listen serves the gen_ai, turn and
// Temporal SDK metrics to Prometheus.
func TestWorkerConsoleTracesCarryGenAIAttributes(t *testing.T) {
	queue := testenv.TaskQueue(t)
	p := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: queue, Config: testenv.DefaultConfig,
		Args: []string{"--offline", "--log-format", "json", "--verbose", "--metrics-listen", "127.0.0.1:0"},
		Env:  []string{"OTEL_TRACES_EXPORTER=console", "OTEL_METRICS_EXPORTER=none", "OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_SERVICE_NAME=worker-under-test"}})
	c := agentchat.NewClient(testenv.Dial(t, "default"), agentchat.ClientOptions{TaskQueue: queue})
	id := testenv.ChatID(t)
	_, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "My name is Alice"})
	require.NoError(t, err)

	want := []string{`"Name":"chat offline"`, `"Key":"gen_ai.operation.name"`, `"Key":"gen_ai.provider.name"`,
		`"Key":"gen_ai.request.model"`, `"Key":"gen_ai.response.model"`, `"Key":"gen_ai.usage.input_tokens"`,
		`"Key":"gen_ai.usage.output_tokens"`, `"Key":"gen_ai.response.finish_reasons"`, `"Key":"gen_ai.agent.id"`,
		`"Key":"gen_ai.conversation.id"`, `"Name":"RunActivity:InvokeAgent"`, `"Value":"worker-under-test"`}
	var logs string
	missing := want
	ok := assert.Eventually(t, func() bool {
		logs, missing = p.Logs(), nil
		for _, w := range want {
			if !strings.Contains(logs, w) {
				missing = append(missing, w)
			}
		}
		return len(missing) == 0
	}, 20*time.Second, 100*time.Millisecond)
	require.True(t, ok, "the worker's output lacks %q", missing)
	assert.Contains(t, logs, `{"Key":"gen_ai.conversation.id","Value":{"Type":"STRING","Value":"`+id+`"}}`)

	require.NotEmpty(t, logLines(t, logs, "worker started"), "JSON log lines")
	calls := logLines(t, logs, "model call")
	require.Len(t, calls, 1, "the activity's line")
	assert.Equal(t, id, calls[0]["chatId"])
	assert.NotEmpty(t, calls[0]["runId"])
	assert.Equal(t, "helper", calls[0]["agentId"])
	assert.Equal(t, "m1", calls[0]["messageId"])
	assert.NotEmpty(t, calls[0]["TraceID"], "the tracing interceptor's trace id")

	served := logLines(t, logs, "metrics served")
	require.Len(t, served, 1)
	url, _ := served[0]["url"].(string)
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, metric := range []string{"gen_ai_client_token_usage", "gen_ai_client_operation_duration_seconds",
		"agentchat_turn_latency", "agentchat_queue_depth", "temporal_request", "temporal_activity_execution_latency"} {
		assert.Contains(t, string(body), metric)
	}
}

// logLines are the JSON log lines of a worker's output whose msg is msg.
func logLines(t *testing.T, out, msg string) []map[string]any {
	var lines []map[string]any
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			lines = append(lines, m)
		}
	}
	return lines
}
