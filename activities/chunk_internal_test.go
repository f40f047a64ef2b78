package activities

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeChunkReadsAsEncodingJSON holds decodeChunk to encoding/json (what
// go-openai's Recv uses) on seeded generated stream chunks, as OpenAI and compatible
// servers send them, each also damaged: whatever one accepts the other accepts and
// reads the same, and what one refuses the other refuses.
func TestDecodeChunkReadsAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 2026))
	accepted, refused := 0, 0
	for i := range 400 {
		for j, raw := range damagedChunks(r, generatedChunk(r)) {
			var want, got openai.ChatCompletionStreamResponse
			wantErr := json.Unmarshal(raw, &want)
			err := decodeChunk(raw, &got)
			if wantErr != nil {
				require.Errorf(t, err, "chunk %d.%d is refused by encoding/json (%v) but accepted: %s", i, j, wantErr, raw)
				refused++
				continue
			}
			require.NoErrorf(t, err, "chunk %d.%d: %s", i, j, raw)
			require.Equalf(t, want, got, "chunk %d.%d: %s", i, j, raw)
			accepted++
		}
	}
	t.Logf("%d chunks accepted, %d refused", accepted, refused)
	assert.Greater(t, accepted, 400)
	assert.Greater(t, refused, 400)
}

// generatedChunk is one chunk of a Chat Completions stream: a role, text, tool call
// or finish chunk, or the usage chunk, with the members compatible servers add.
func generatedChunk(r *rand.Rand) []byte {
	texts := []string{"Hello", " world", "", " naïve 猫", ` "quoted"`, "\n", "\u2028", " <b>&</b>"}
	c := map[string]any{"id": fmt.Sprintf("chatcmpl-%d", r.IntN(1000)), "object": "chat.completion.chunk",
		"created": 1733000000 + r.IntN(1000), "model": "gpt-4o-mini-2024-07-18"}
	if r.IntN(2) == 0 {
		c["system_fingerprint"] = "fp_44709d6fcb"
	}
	delta := map[string]any{}
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	switch r.IntN(5) {
	case 0:
		delta["role"], delta["content"], delta["refusal"] = "assistant", "", nil
	case 1:
		delta["content"] = texts[r.IntN(len(texts))]
	case 2:
		delta["tool_calls"] = []any{map[string]any{"index": r.IntN(3), "id": "call_abc", "type": "function",
			"function": map[string]any{"name": "lookup", "arguments": `{"q":`}}}
	case 3:
		choice["finish_reason"] = []string{"stop", "tool_calls", "length", "content_filter"}[r.IntN(4)]
	default:
		c["choices"] = []any{}
		c["usage"] = map[string]any{"prompt_tokens": r.IntN(5000), "completion_tokens": r.IntN(500), "total_tokens": r.IntN(6000),
			"prompt_tokens_details": map[string]any{"cached_tokens": 0}, "completion_tokens_details": map[string]any{"reasoning_tokens": 0}}
	}
	if _, ok := c["choices"]; !ok {
		if r.IntN(3) == 0 {
			choice["logprobs"] = nil
		}
		c["choices"] = []any{choice}
		if r.IntN(2) == 0 {
			c["usage"] = nil
		}
	}
	if r.IntN(5) == 0 {
		c["service_tier"], c["x_extra"] = "default", map[string]any{"a": []any{1, 2}}
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return b
}

// damagedChunks returns raw and versions of it a faulty server could send.
func damagedChunks(r *rand.Rand, raw []byte) [][]byte {
	s := string(raw)
	out := [][]byte{raw}
	add := func(v string) { out = append(out, []byte(v)) }
	add(strings.Replace(s, `"choices"`, `"Choices"`, 1))
	add(strings.Replace(s, `"created":`, `"created":"`, 1))
	add(strings.Replace(s, `"index":0`, `"index":"0"`, 1))
	add(strings.Replace(s, `"index":0`, `"index":1.5`, 1))
	add(strings.Replace(s, `{"id"`, `{"model":"first","id"`, 1))
	add(strings.Replace(s, `"content":"`, "\"content\":\"\xff", 1))
	add(strings.Replace(s, `"content":"`, `"content":"\ud800`, 1))
	add(strings.Replace(s, `"choices":[`, `"choices":{"a":[`, 1))
	add(strings.ReplaceAll(s, `,"`, " ,\n\""))
	add(s[:r.IntN(len(s))])
	i := r.IntN(len(s))
	add(s[:i] + s[i+1:])
	add(s + []string{"{}", " x", "]", " "}[r.IntN(4)])
	return out
}

// TestChunkDecoderReadsAsDecodeChunk holds chunkDecoder, which reads a stream's text
// chunks from a template, to decodeChunk (each chunk read whole) on seeded streams:
// text chunks that differ only in their text (the template's case), written as
// servers write them and damaged, between other generated chunks, and chunks made to
// mislead a template (a second "content" in another letter case, an escaped name,
// the member twice, white space around the colon).
func TestChunkDecoderReadsAsDecodeChunk(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2026))
	tokens := []string{`"word"`, `" naïve 猫"`, `"\u003cb\u003e"`, `"<b>"`, `"\"content\":\"x\""`, `"a\\b"`, `"\ud800"`,
		"\"\xff\"", `"\u2028"`, `""`, `null`, `12`, `"abc`, `"a"b"`, `"\x"`, "\"a\nb\"", `"a" "b"`, `["a"]`, `"é\/"`, `"fixed"`, `"last"`}
	shapes := []string{
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content" : %s},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"choices":[{"delta":{"role":"assistant","content":%s}}],"model":"m"}`,
		`{"choices":[{"delta":{"Content":%s}}],"model":"m"}`,
		`{"choices":[{"delta":{"content":%s,"CONTENT":"fixed"}}],"model":"m"}`,
		`{"choices":[{"delta":{"CONTENT":"first","content":%s}}],"model":"m"}`,
		`{"choices":[{"delta":{"\u0063ontent":"first","content":%s}}],"model":"m"}`,
		`{"choices":[{"delta":{"content":%s,"\u0063ontent":"last"}}],"model":"m"}`,
		`{"choices":[{"delta":{"content":%s}},{"delta":{"content":"second"}}],"model":"m"}`,
		`{"choices":[{"delta":{"content":%s,"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}],"model":"m"}`,
		`{"choices":[{"delta":{"content":%s}}],"model":"m","usage":{"prompt_tokens":1}}`,
		`{"choices":[{"delta":{"content":%s}}],"x":{"content":"other"},"model":"m"}`,
	}
	same, fast := 0, 0
	for i := range 300 {
		var d chunkDecoder
		shape := shapes[r.IntN(len(shapes))]
		for j := range 30 {
			raw := []byte(fmt.Sprintf(shape, tokens[r.IntN(len(tokens))]))
			switch r.IntN(8) {
			case 0:
				raw = generatedChunk(r)
			case 1:
				chunks := damagedChunks(r, raw)
				raw = chunks[r.IntN(len(chunks))]
			}
			if d.head != nil && bytes.HasPrefix(raw, d.head) && bytes.HasSuffix(raw, d.tail) {
				fast++
			}
			var want, got openai.ChatCompletionStreamResponse
			wantErr := decodeChunk(raw, &want)
			err := d.decode(raw, &got)
			if wantErr != nil {
				require.Errorf(t, err, "stream %d chunk %d is refused whole (%v) but read: %s", i, j, wantErr, raw)
				continue
			}
			require.NoErrorf(t, err, "stream %d chunk %d: %s", i, j, raw)
			require.Equalf(t, want, got, "stream %d chunk %d: %s", i, j, raw)
			same++
		}
	}
	t.Logf("%d chunks read alike, %d of them matched the template", same, fast)
	assert.Greater(t, fast, 2000)
}
