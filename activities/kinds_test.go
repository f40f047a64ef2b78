package activities_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/wire"
)

// kindEndpoint starts a model endpoint that answers every request with a 500 and
// records the paths asked, and activities whose agent "old" has kind kind on it. The
// registry is built in code, as a config that skipped agents.ParseConfig (or an old
// one) would be.
func kindEndpoint(t *testing.T, kind wire.Kind) (*activities.Activities, func() []string) {
	t.Helper()
	var (
		mu    sync.Mutex
		paths []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		http.Error(w, `{"error":{"message":"down"}}`, http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	reg := agents.NewRegistry(agents.Config{
		Endpoints: map[string]agents.Endpoint{"default": {BaseURL: srv.URL, Stream: new(bool)}},
		Agents:    []agents.Definition{{ID: "old", Name: "Old", Kind: kind, Model: "m", Endpoint: "default"}},
	})
	acts, err := activities.New(activities.Config{Registry: reg})
	require.NoError(t, err)
	return acts, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

// An agent of a kind this worker does not implement gets a clear, non-retryable
// error naming the agent, its kind and the known kinds, and no model call: never the
// chat_completion path.
func TestInvokeAgentRefusesAnUnknownKind(t *testing.T) {
	acts, paths := kindEndpoint(t, "completion_v0")
	_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "old", ReplyID: "m1/1", History: seed[:1]})
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())
	assert.True(t, app.NonRetryable())
	for _, want := range []string{`agent "old"`, `"completion_v0"`, "chat_completion, responses, assistant"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Empty(t, paths(), "no model call for an unknown kind")
}

// A definition built in code without a kind is chat_completion (Definition.Kind's
// default); the service-thread kinds call their own APIs.
func TestInvokeAgentCallsTheAPIOfItsKind(t *testing.T) {
	for kind, path := range map[wire.Kind]string{"": "/chat/completions", wire.KindChatCompletion: "/chat/completions",
		wire.KindResponses: "/responses", wire.KindAssistant: "/assistants"} {
		acts, paths := kindEndpoint(t, kind)
		_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "old", ReplyID: "m1/1", History: seed[:1]})
		app := appError(t, err)
		assert.Equal(t, wire.ErrTypeModelUnavailable, app.Type(), "kind %q: %v", kind, err)
		got := paths()
		require.NotEmpty(t, got, "kind %q", kind)
		assert.Equal(t, path, got[0], "kind %q", kind)
	}
}
