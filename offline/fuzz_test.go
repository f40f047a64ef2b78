package offline_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// FuzzChatCompletions feeds arbitrary bodies to POST /v1/chat/completions: the server
// must answer 200 with a well-formed completion or stream, or 400 with an OpenAI error,
// and never panic.
func FuzzChatCompletions(f *testing.F) {
	seeds := []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"My name is Al"},{"role":"user","content":"what is my name"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c","content":null}]}`,
		`{"messages":[]}`,
		`{"messages":[{"role":"user","content":"\xff\xfe"}]}`,
		`[]`, ``, `{`,
	}
	fuzzPost(f, "/v1/chat/completions", seeds, checkCompletion, http.StatusBadRequest)
}

// checkCompletion fails t unless rec holds a completion, or a stream ending in [DONE],
// whose text says it is offline.
func checkCompletion(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Header().Get("Content-Type") == "text/event-stream" {
		if !bytes.HasPrefix(rec.Body.Bytes(), []byte("data: ")) || !bytes.HasSuffix(rec.Body.Bytes(), []byte("data: [DONE]\n\n")) {
			t.Fatalf("malformed stream: %s", rec.Body)
		}
		return
	}
	var resp openai.ChatCompletionResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("malformed completion (%v): %s", err, rec.Body)
	}
	if !strings.HasPrefix(resp.Choices[0].Message.Content, "[offline] assistant received") {
		t.Fatalf("unexpected text %q", resp.Choices[0].Message.Content)
	}
}
