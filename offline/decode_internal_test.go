package offline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeRequestV1 is decodeRequest as encoding/json reads it (the reference): one
// value, then nothing but white space.
func decodeRequestV1(body []byte) (openai.ChatCompletionRequest, error) {
	var wire wireRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&wire); err != nil {
		return openai.ChatCompletionRequest{}, err
	}
	if rest := body[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return openai.ChatCompletionRequest{}, fmt.Errorf("data after the JSON value: %q", rest)
	}
	req := wire.ChatCompletionRequest
	req.Messages = make([]openai.ChatCompletionMessage, len(wire.Messages))
	for i, m := range wire.Messages {
		var err error
		if req.Messages[i], err = m.message(); err != nil {
			return openai.ChatCompletionRequest{}, err
		}
	}
	return req, nil
}

// TestDecodeRequestReadsAsEncodingJSON holds decodeRequest (encoding/json/v2 with v1's
// options) to encoding/json on seeded generated request bodies, each also damaged in
// ways a client could: every body one accepts, the other accepts and reads the same;
// every body one refuses, the other refuses, with a 400. The bodies go one after
// another through decodeRequest's reused buffers (decodeBuffers), so a member left
// over from one request would show in the next (not zeroing them fails it, tried).
func TestDecodeRequestReadsAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	accepted, refused := 0, 0
	for i := range 300 {
		for j, body := range damaged(r, generatedRequest(r)) {
			want, wantErr := decodeRequestV1(body)
			req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
			got, status, err := decodeRequest(httptest.NewRecorder(), req)
			if wantErr != nil {
				require.Errorf(t, err, "body %d.%d is refused by encoding/json (%v) but accepted: %s", i, j, wantErr, body)
				assert.Equal(t, http.StatusBadRequest, status)
				assert.Contains(t, err.Error(), "could not parse the JSON body of the request")
				refused++
				continue
			}
			require.NoErrorf(t, err, "body %d.%d: %s", i, j, body)
			require.Equalf(t, want, got, "body %d.%d: %s", i, j, body)
			accepted++
		}
	}
	t.Logf("%d bodies accepted, %d refused", accepted, refused)
	assert.Greater(t, accepted, 300)
	assert.Greater(t, refused, 300)
}

// TestDecodeRequestRefusesDataAfterTheBody: json.Decoder stops after one value; the
// server must not take a body with more after it.
func TestDecodeRequestRefusesDataAfterTheBody(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}{}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}]} x`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}]`,
	} {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		_, status, err := decodeRequest(httptest.NewRecorder(), req)
		require.Error(t, err, body)
		assert.Equal(t, http.StatusBadRequest, status, body)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(" \n{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\r\n\t "))
	_, _, err := decodeRequest(httptest.NewRecorder(), req)
	require.NoError(t, err, "white space around the body is JSON")
}

// generatedRequest is a chat completion request body as go-openai or another client
// could send it: messages of every role, string, array or null content, names, tool
// calls, and the request's other members, in a random order, with unknown members.
func generatedRequest(r *rand.Rand) []byte {
	texts := []string{"hi", "", "naïve café 猫", `say "hello"\n`, "tab\there", "<b>&amp;</b>", strings.Repeat("long words ", 30), "\u2028x\u2029"}
	text := func() string { return texts[r.IntN(len(texts))] }
	var msgs []any
	for range 1 + r.IntN(8) {
		m := map[string]any{}
		switch r.IntN(5) {
		case 0:
			m["role"], m["content"] = "system", text()
		case 1:
			m["role"] = "user"
			if r.IntN(3) == 0 {
				m["content"] = []any{map[string]any{"type": "text", "text": text()},
					map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png", "detail": "low"}}}
			} else {
				m["content"] = text()
			}
			if r.IntN(2) == 0 {
				m["name"] = "Alice"
			}
		case 2:
			m["role"], m["content"] = "assistant", text()
			if r.IntN(2) == 0 {
				m["content"] = nil
				m["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", r.IntN(100)), "type": "function",
					"function": map[string]any{"name": "lookup", "arguments": `{"q":"x"}`}}}
			}
			if r.IntN(2) == 0 {
				m["name"] = "helper"
			}
		case 3:
			m["role"], m["tool_call_id"], m["content"] = "tool", fmt.Sprintf("call_%d", r.IntN(100)), text()
		default:
			m["role"], m["content"], m["refusal"], m["reasoning_content"] = "assistant", text(), "no", "thinking"
		}
		if r.IntN(6) == 0 {
			m["x_unknown"] = []any{1, "two", nil}
		}
		msgs = append(msgs, m)
	}
	fields := map[string]any{"model": "gpt-4o-mini", "messages": msgs}
	if r.IntN(2) == 0 {
		fields["stream"] = true
		fields["stream_options"] = map[string]any{"include_usage": r.IntN(2) == 0}
	}
	if r.IntN(2) == 0 {
		fields["temperature"], fields["max_tokens"], fields["n"] = 0.5, 100, 1
	}
	if r.IntN(3) == 0 {
		fields["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}}
		fields["tool_choice"] = []any{"auto", "required", map[string]any{"type": "function", "function": map[string]any{"name": "lookup"}}}[r.IntN(3)]
	}
	if r.IntN(4) == 0 {
		fields["metadata"] = map[string]any{"k": "v"}
	}
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	return b
}

// damaged returns body and versions of it a client could send or break: members
// renamed in another case, repeated, of the wrong type, white space, invalid UTF-8,
// cut short, a byte dropped, data after it.
func damaged(r *rand.Rand, body []byte) [][]byte {
	s := string(body)
	out := [][]byte{body}
	add := func(v string) { out = append(out, []byte(v)) }
	add(strings.Replace(s, `"messages"`, `"Messages"`, 1))
	add(strings.Replace(s, `"role"`, `"ROLE"`, 1))
	add(strings.Replace(s, `{"`, `{"model":"first","`, 1))
	add(strings.Replace(s, `"content":"`, `"content":7,"x":"`, 1))
	add(strings.Replace(s, `"content":"`, `"content":{"a":1},"x":"`, 1))
	add(strings.Replace(s, `"stream":true`, `"stream":"true"`, 1))
	add(strings.Replace(s, `"messages":[`, `"messages":null,"m":[`, 1))
	add(strings.ReplaceAll(s, `,"`, " ,\n\t\""))
	add(strings.Replace(s, `"hi"`, "\"h\xffi\"", 1))
	add(strings.Replace(s, `"hi"`, `"h\ud800i"`, 1))
	add(s[:r.IntN(len(s))])
	i := r.IntN(len(s))
	add(s[:i] + s[i+1:])
	add(s + []string{"{}", " x", "]", "\n", "null"}[r.IntN(5)])
	return out
}

// BenchmarkDecodeRequest: a 64 KB request body, as a long chat's model call sends it.
func BenchmarkDecodeRequest(b *testing.B) {
	req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Stream: true}
	var body []byte
	for i := 0; len(body) < 64_000; i++ {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: []string{"user", "assistant"}[i%2],
			Content: strings.Repeat("word ", 20+(i*37)%200), Name: "Helper"})
		body, _ = json.Marshal(req)
	}
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		if _, _, err := decodeRequest(httptest.NewRecorder(), r); err != nil {
			b.Fatal(err)
		}
	}
}
