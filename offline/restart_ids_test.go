package offline_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

// A restarted server (a new process) does not hand out the ids an earlier one did: a
// chat's previous_response_id from before the restart is unknown (404, so the chat can
// re-sync), never the id of another conversation on the new server.
func TestNewServersHandOutNewResponseIDs(t *testing.T) {
	create := func(s *offline.Server, body string) (int, string) {
		resp, err := http.Post(s.URL()+"/responses", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out.ID
	}
	before := startServer(t, offline.Options{})
	_, id := create(before, `{"model":"m","input":"hello"}`)
	require.NotEmpty(t, id)
	after := startServer(t, offline.Options{})
	_, other := create(after, `{"model":"m","input":"another chat"}`)
	assert.NotEqual(t, id, other)
	status, _ := create(after, `{"model":"m","input":"and now?","previous_response_id":"`+id+`"}`)
	assert.Equal(t, http.StatusNotFound, status)
	require.Len(t, after.Violations(), 1)
	assert.Equal(t, "previous_response_id", after.Violations()[0].Param)
}
