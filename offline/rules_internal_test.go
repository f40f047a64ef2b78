package offline

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonBound never counts less than the messages' JSON, whatever their strings hold
// (each worst case of encoding/json's escaping) and whichever members are set, so
// checkContext skips encoding only messages that fit the window.
func TestJSONBoundIsAnUpperBound(t *testing.T) {
	worst := []string{"", "x", "<>&", "\x00\x01\x1f", "\xff\xfe", "\u2028\u2029", `"\`, "café 猫 🐈", "\t\n\r"}
	r := rand.New(rand.NewPCG(7, 11))
	pick := func() string {
		var b strings.Builder
		for range r.IntN(5) {
			b.WriteString(worst[r.IntN(len(worst))])
		}
		return b.String()
	}
	index := 1 << 40
	for range 2000 {
		var msgs []openai.ChatCompletionMessage
		for range r.IntN(4) {
			m := openai.ChatCompletionMessage{Role: pick(), Refusal: pick(), Name: pick(), ReasoningContent: pick(), ToolCallID: pick()}
			if r.IntN(2) == 0 {
				m.Content = pick()
			} else {
				for range r.IntN(3) {
					p := openai.ChatMessagePart{Type: openai.ChatMessagePartType(pick()), Text: pick()}
					if r.IntN(2) == 0 {
						p.ImageURL = &openai.ChatMessageImageURL{URL: pick(), Detail: openai.ImageURLDetail(pick())}
					}
					m.MultiContent = append(m.MultiContent, p)
				}
			}
			if r.IntN(3) == 0 {
				m.FunctionCall = &openai.FunctionCall{Name: pick(), Arguments: pick()}
			}
			for range r.IntN(3) {
				m.ToolCalls = append(m.ToolCalls, openai.ToolCall{Index: &index, ID: pick(), Type: openai.ToolType(pick()),
					Function: openai.FunctionCall{Name: pick(), Arguments: pick()}})
			}
			msgs = append(msgs, m)
		}
		b, err := json.Marshal(msgs)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, jsonBound(msgs), len(b), "%s", b)
	}
}

// Messages whose bound fits the window are not refused; those whose bound does not
// are counted exactly, as before.
func TestCheckContextSkipsOnlyWhatFits(t *testing.T) {
	small := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: strings.Repeat("<", 1000)}}
	assert.Nil(t, checkContext(small))
	// Its bound is over the window, its JSON is not: counted, not refused.
	near := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: strings.Repeat("x", 2*ContextWindowTokens)}}
	require.Greater(t, jsonBound(near)/4, ContextWindowTokens)
	assert.Nil(t, checkContext(near))
	over := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: strings.Repeat("<", ContextWindowTokens)}}
	v := checkContext(over)
	require.NotNil(t, v)
	assert.Equal(t, "context_length_exceeded", v.Code)
}

func BenchmarkCheckContext(b *testing.B) {
	var msgs []openai.ChatCompletionMessage
	for i := range 400 {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Name: "Alice",
			Content: strings.Repeat("please check the shipping address ", 9) + string(rune('a'+i%26))})
	}
	for b.Loop() {
		if checkContext(msgs) != nil {
			b.Fatal("refused")
		}
	}
}

func BenchmarkContextTokens(b *testing.B) {
	var msgs []openai.ChatCompletionMessage
	for i := range 400 {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Name: "Alice",
			Content: strings.Repeat("please check the shipping address ", 9) + string(rune('a'+i%26))})
	}
	for b.Loop() {
		_ = ContextTokens(msgs)
	}
}
