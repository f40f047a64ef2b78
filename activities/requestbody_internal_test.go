package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// TestEncodeRequestWritesWhatGoOpenAIWrites holds encodeRequest to go-openai's own
// encoding (encoding/json.Marshal of the request, its JSONMarshaller) on seeded
// requests whose every field, go-openai's nested types included, is filled at random
// (reflectively, so a field go-openai adds is covered too): the same bytes, or an
// error where it has one. One difference is allowed, and it is no difference to a
// JSON reader: invalid UTF-8 becomes U+FFFD in both, which encoding/json writes as
// the escape \ufffd and encoding/json/v2 as the character itself (sameFFFD).
func TestEncodeRequestWritesWhatGoOpenAIWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 2026))
	same, refused := 0, 0
	for i := range 3000 {
		var req openai.ChatCompletionRequest
		fill(r, reflect.ValueOf(&req).Elem(), 0)
		want, wantErr := json.Marshal(req)
		got, err := encodeRequest(req)
		if wantErr != nil {
			require.Errorf(t, err, "request %d is refused by go-openai (%v) but encoded: %s", i, wantErr, got)
			refused++
			continue
		}
		require.NoErrorf(t, err, "request %d: %s", i, want)
		require.Equalf(t, sameFFFD(want), sameFFFD(got), "request %d", i)
		same++
	}
	t.Logf("%d requests encoded alike, %d refused by both", same, refused)
	assert.Greater(t, same, 2000)
	assert.Greater(t, refused, 10)
}

// TestEncodeRequestOfALongChat: a request the size of a long chat's (about 1,000
// messages, 190 KB), with tool calls and content parts, is written as go-openai
// writes it.
func TestEncodeRequestOfALongChat(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true}}
	for i := range 1000 {
		m := openai.ChatCompletionMessage{Role: []string{"user", "assistant", "tool"}[i%3], Content: strings.Repeat(randomText(r), 1+r.IntN(20))}
		switch i % 7 {
		case 1:
			m.ToolCalls = []openai.ToolCall{{ID: fmt.Sprint("call_", i), Type: "function", Function: openai.FunctionCall{Name: "lookup", Arguments: `{"q":"<x>"}`}}}
		case 2:
			m.Content, m.MultiContent = "", []openai.ChatMessagePart{{Type: "text", Text: randomText(r)},
				{Type: "image_url", ImageURL: &openai.ChatMessageImageURL{URL: "https://example.com/a.png?x=1&y=2", Detail: "low"}}}
		}
		req.Messages = append(req.Messages, m)
	}
	want, err := json.Marshal(req)
	require.NoError(t, err)
	got, err := encodeRequest(req)
	require.NoError(t, err)
	require.Greater(t, len(want), 150_000)
	require.Equal(t, sameFFFD(want), sameFFFD(got))
}

// TestModelCallSendsTheEncodedBody: the model receives the request encodeRequest
// wrote, messages included, through go-openai and doer, streamed or not; a client
// whose HTTPDoer is not doer gets errBodyNotSent instead of an answer to a request
// without messages.
func TestModelCallSendsTheEncodedBody(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got, _ = io.ReadAll(req.Body)
		var in struct{ Stream bool }
		_ = json.Unmarshal(got, &in)
		if in.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	client := func(withDoer bool) *openai.Client {
		oc := openai.DefaultConfig("k")
		oc.BaseURL = srv.URL
		if withDoer {
			oc.HTTPClient = &doer{client: srv.Client()}
		}
		return openai.NewClientWithConfig(oc)
	}
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "Be brief <b>"}, {Role: "user", Content: "Hello & welcome"}}}
	// call runs fn as an activity (completeOnce and completeStreaming read its info).
	call := func(fn func(context.Context) (wire.InvokeResult, error)) (wire.InvokeResult, error) {
		var (
			res     wire.InvokeResult
			callErr error
		)
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivityWithOptions(func(ctx context.Context) error {
			res, callErr = fn(ctx)
			return nil
		}, activity.RegisterOptions{Name: "call"})
		_, err := env.ExecuteActivity("call")
		require.NoError(t, err)
		return res, callErr
	}
	for _, streaming := range []bool{false, true} {
		complete := completeOnce
		sent := req
		if streaming {
			complete = completeStreaming
			sent.Stream, sent.StreamOptions = true, &openai.StreamOptions{IncludeUsage: true}
		}
		want, err := json.Marshal(sent)
		require.NoError(t, err)
		res, err := call(func(ctx context.Context) (wire.InvokeResult, error) { return complete(ctx, client(true), req) })
		require.NoError(t, err, "streaming %v", streaming)
		assert.Equal(t, "hi", chat.Message{Contents: res.Contents}.Text())
		assert.Equal(t, string(want), string(got), "streaming %v", streaming)

		_, err = call(func(ctx context.Context) (wire.InvokeResult, error) { return complete(ctx, client(false), req) })
		require.ErrorIs(t, err, errBodyNotSent, "streaming %v", streaming)
		assert.Contains(t, string(got), `"messages":null`)
	}
}

// sameFFFD writes U+FFFD as itself in an encoded body: the generated texts never
// hold the text "\ufffd", so the escape can only be the character.
func sameFFFD(b []byte) string { return strings.ReplaceAll(string(b), `\ufffd`, "\ufffd") }

var texts = []string{"", "Hello", " naïve 猫 ", `"quoted" \ back`, "<b>&amp;</b>", "\u2028\u2029", "\x00\x1f\t\n", "\xff\xfe bad", "\xed\xa0\x80 😀", "a\u007fb"}

func randomText(r *rand.Rand) string { return texts[r.IntN(len(texts))] }

// fill sets v, of any type go-openai's request is made of, to a random value: zero
// values and empty slices and maps often enough that omitempty is exercised.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if depth > 6 || r.IntN(6) == 0 {
		return // the zero value
	}
	switch v.Kind() {
	case reflect.String:
		s := randomText(r)
		if v.Type().Name() != "string" && r.IntN(2) == 0 { // named string types: the API's enums
			s = []string{"auto", "default", "function", "text", "image_url", "json_schema", "low"}[r.IntN(7)]
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt([]int64{0, 1, -1, 42, math.MaxInt32, int64(r.IntN(100000))}[r.IntN(6)])
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 0.7, 1, 1e-7, 1e21, -2.5, float64(float32(0.1)), r.Float64()}[r.IntN(8)])
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // json.RawMessage and []byte
			v.SetBytes([]byte([]string{`{"type":"object"}`, `[1, 2]`, `"<s>"`, `null`, `{"a":  {"b":true}}`}[r.IntN(5)]))
			return
		}
		n := r.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range r.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(fmt.Sprint(randomText(r), r.IntN(9)))
			e := reflect.New(v.Type().Elem()).Elem()
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		values := []any{nil, "auto", "<none>", true, 3, 0.5, map[string]any{"z": 1, "a": []any{"x", nil}},
			json.RawMessage(`{"type": "function", "function": {"name": "f"}}`)}
		x := reflect.ValueOf(values[r.IntN(len(values))])
		if x.IsValid() && x.Type().Implements(v.Type()) {
			v.Set(x)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
		if m, ok := v.Addr().Interface().(*openai.ChatCompletionMessage); ok && r.IntN(10) != 0 {
			// Mostly one content shape, as callers send; sometimes both (an error in both).
			if r.IntN(2) == 0 {
				m.MultiContent = nil
			} else {
				m.Content = ""
			}
		}
	}
}

// BenchmarkEncodeRequest: a 54 KB request (the median bench turn's) as go-openai
// encodes it and as encodeRequest does.
func BenchmarkEncodeRequest(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true}}
	for i := 0; ; i++ {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: []string{"user", "assistant"}[i%2],
			Content: strings.Repeat("word ", 20+r.IntN(200)), Name: "Helper"})
		if n, _ := json.Marshal(req); len(n) > 54_000 {
			break
		}
	}
	b.Run("go-openai", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encodeRequest", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeRequest(req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
