package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// The secret scan: a chat driven with a distinctive API key through turns, a tool
// whose error names the key, a provider error whose body echoes it, export and
// migration; the key is then looked for in the whole event history, the exports, the
// message store's file, State and the captured logs.

// secretKey looks like no known key pattern, so that only redaction by value hides it.
const secretKey = "zq-AGENTCHAT-SECRET-7f3a9c2e51"

// echoFront is a model endpoint in front of the offline model: it passes requests on,
// except that one whose body asks for it answers 401 with a body quoting the key it
// was sent, as a provider that echoes a wrong key does.
type echoFront struct {
	mu      sync.Mutex
	sawKey  bool
	offline *url.URL
}

func (f *echoFront) handler(t *testing.T) http.Handler {
	proxy := httputil.NewSingleHostReverseProxy(f.offline)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		f.mu.Lock()
		f.sawKey = f.sawKey || key == secretKey
		f.mu.Unlock()
		if bytes.Contains(body, []byte("ECHO-KEY")) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"message": "Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com",
				"type":    "invalid_request_error", "code": "invalid_api_key"}})
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// lockedBuffer is a log sink for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestSecretScanFindsTheAPIKeyNowhere(t *testing.T) {
	const config = `
endpoints:
  secret: {baseURL: "https://api.example.invalid/v1", apiKeyEnv: AGENTCHAT_SCAN_KEY}
tools:
  vault: {description: "Reads the vault"}
agents:
  - {id: helper, name: Helper, model: m, endpoint: secret, call: {initialInterval: 50ms, maxAttempts: 2}}
  - {id: clerk, name: Clerk, model: m, endpoint: secret, tools: [vault], call: {initialInterval: 50ms, maxAttempts: 2}}
`
	getenv := func(name string) string {
		if name == "AGENTCHAT_SCAN_KEY" {
			return secretKey
		}
		return ""
	}
	front := &echoFront{}
	frontURL := func(offlineURL string) string {
		u, err := url.Parse(offlineURL)
		require.NoError(t, err)
		front.offline = &url.URL{Scheme: u.Scheme, Host: u.Host}
		srv := httptest.NewServer(front.handler(t))
		t.Cleanup(srv.Close)
		return srv.URL + u.Path
	}
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tools := map[string]activities.ToolFunc{"vault": func(context.Context, json.RawMessage) (string, error) {
		return "", activities.ToolError("vault refused the credentials %s", secretKey)
	}}
	scripts := offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
		{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "vault", Arguments: `{}`}}}, {}}}}
	a := testenv.New(t, testenv.Options{Config: config, Getenv: getenv, ModelFront: frontURL, Logger: logger,
		Tools: tools, Model: scripts})
	b := testenv.New(t, testenv.Options{Config: config, Getenv: getenv, ModelFront: frontURL, Logger: logger,
		Tools: tools, Model: scripts, Namespace: "agentchat-test-scan", TaskQueue: a.TaskQueue})

	// Turns, and a provider error that echoes the key.
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, a, id, "m1", "Hello, how are you?")
	_, err = a.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "ECHO-KEY now"})
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeTurnFailed, appType(err))
	assert.Contains(t, err.Error(), activities.Redacted, "the echoed key is redacted")
	assert.NotContains(t, err.Error(), secretKey)
	front.mu.Lock()
	require.True(t, front.sawKey, "the key did reach the endpoint")
	front.mu.Unlock()
	st, err := a.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.NotNil(t, st.LastError)
	send(t, a, id, "m3", "What's my name?")

	// A tool whose error names the key.
	tool := testenv.ChatID(t) + "-tool"
	_, err = a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: tool, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, a, tool, "t1", "Open the vault")
	require.Len(t, res.Messages, 3)
	assert.Contains(t, res.Messages[1].Contents[0].Error, activities.Redacted)

	// Export (client and worker sinks) and migration.
	dir := t.TempDir()
	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "client.json"), doc, 0o600))
	_, err = a.Client.ExportTo(ctxFor(t), tool, agentchat.ExportInput{Sink: wire.SinkFile, Path: filepath.Join(dir, "worker.json")})
	require.NoError(t, err)
	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	_, err = b.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m4", Text: "ECHO-KEY again, after the move"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secretKey)

	// The scan.
	places := map[string]string{"logs": logs.String()}
	for _, chat := range []struct {
		h  *testenv.Harness
		id string
	}{{a, id}, {a, tool}, {b, id}} {
		out, err := temporalShowIn(t, chat.h.Namespace, chat.id)
		require.NoError(t, err, out)
		places["history of "+chat.id+" in "+chat.h.Namespace] = readable(t, out)
		st, err := chat.h.Client.State(ctxFor(t), chat.id)
		require.NoError(t, err)
		j, _ := json.Marshal(st)
		places["State of "+chat.id] = string(j)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 2)
	if s, ok := a.MessageStore.(*sqlite.Store); ok {
		files = append(files, s.Path(), s.Path()+"-wal")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		places[f] = string(b)
	}
	assert.Contains(t, places["history of "+id+" in "+a.Namespace], activities.Redacted, "the scan reads the history that holds the error")
	for where, text := range places {
		assert.NotContains(t, text, secretKey, "the key in %s", where)
	}
}

// temporalShowIn is temporalShow in namespace ns.
func temporalShowIn(t *testing.T, ns, chatID string) (string, error) {
	t.Helper()
	return temporalShow(t, chatID, "--namespace", ns)
}
