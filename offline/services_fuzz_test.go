package offline_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// FuzzResponses feeds arbitrary bodies to POST /v1/responses: the server must answer
// 200 with a response whose text says it is offline, or 400/404 with an OpenAI error,
// and never panic.
func FuzzResponses(f *testing.F) {
	seeds := []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","instructions":"x","input":[{"role":"user","content":"My name is Al"},{"role":"assistant","content":"ok"}]}`,
		`{"input":[{"type":"function_call","call_id":"c","name":"f"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"r"}]}]}`,
		`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"x"},{"type":"input_file"}]}]}`,
		`{"input":[],"previous_response_id":"resp_offline_1"}`,
		`{"input":[{"type":"function_call_output","call_id":"c"}]}`,
		`{"input":null}`, `[]`, ``, `{`,
	}
	fuzzPost(f, "/v1/responses", seeds, checkResponse, http.StatusBadRequest, http.StatusNotFound)
}

// checkResponse fails t unless rec holds a response whose text says it is offline.
func checkResponse(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	var resp openai.CreateResponseResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || !strings.HasPrefix(resp.GetOutputText(), "[offline] assistant received") {
		t.Fatalf("malformed response (%v): %s", err, rec.Body)
	}
}
