package testenv

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

// errorRecorder is a testing.TB that keeps what Errorf reports instead of failing.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// A harness's test fails when the offline model refused a request OpenAI refuses, and
// says which; one without refusals does not.
func TestFailOnViolationsReportsEachRefusal(t *testing.T) {
	model := offline.New(offline.Options{})
	rec := &errorRecorder{TB: t}
	failOnViolations(rec, model)
	assert.Empty(t, rec.errs)

	body := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"42"}]}`
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	req.Header.Set(offline.AgentHeader, "helper")
	w := httptest.NewRecorder()
	model.ServeHTTP(w, req)
	require.Equal(t, http.StatusBadRequest, w.Code)
	failOnViolations(rec, model)
	require.Len(t, rec.errs, 1)
	assert.Contains(t, rec.errs[0], `/v1/chat/completions (agent "helper"`)
	assert.Contains(t, rec.errs[0], `(param "messages.[1].role")`)
}
