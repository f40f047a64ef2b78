package offline_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentchat/agentchat/offline"
)

// FuzzResponses feeds arbitrary bodies to POST /v1/responses: the server must answer
// 200 with a response whose text says it is offline, or 400/404 with an OpenAI error,
// and never panic.
func FuzzResponses(f *testing.F) {
	for _, body := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","instructions":"x","input":[{"role":"user","content":"My name is Al"},{"role":"assistant","content":"ok"}]}`,
		`{"input":[{"type":"function_call","call_id":"c","name":"f"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"r"}]}]}`,
		`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"x"},{"type":"input_file"}]}]}`,
		`{"input":[],"previous_response_id":"resp_offline_1"}`,
		`{"input":[{"type":"function_call_output","call_id":"c"}]}`,
		`{"input":null}`, `[]`, ``, `{`,
	} {
		f.Add(body)
	}
	s := offline.New(offline.Options{})
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(body)))
		switch rec.Code {
		case http.StatusOK:
			var resp openai.CreateResponseResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || !strings.HasPrefix(resp.GetOutputText(), "[offline] assistant received") {
				t.Fatalf("malformed response (%v): %s", err, rec.Body)
			}
		case http.StatusBadRequest, http.StatusNotFound:
			var e struct {
				Error *openai.APIError `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" {
				t.Fatalf("%d without an OpenAI error body: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}
