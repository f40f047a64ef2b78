package offline

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

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

// plainName takes only names checkName takes, and every name the pattern takes.
func TestPlainNameAgreesWithCheckName(t *testing.T) {
	names := []string{"", "a", "Alice", "a-b_c", "Ada Lovelace", "é", "a.b", strings.Repeat("a", 64), strings.Repeat("a", 65), "a\n", "ab\x00"}
	for c := range 256 {
		names = append(names, "x"+string(rune(c)), string([]byte{byte(c)}))
	}
	for _, n := range names {
		if plainName(n) {
			assert.Nil(t, checkName("p", n), "%q", n)
		}
		assert.Equal(t, checkName("p", n) == nil, plainName(n), "%q", n)
	}
}

// countWords counts as the plain loop over runes with unicode.IsSpace does.
func TestCountWordsAsRunes(t *testing.T) {
	want := func(s string) int {
		n, in := 0, false
		for _, r := range s {
			if unicode.IsSpace(r) {
				in = false
			} else if !in {
				in, n = true, n+1
			}
		}
		return n
	}
	for _, s := range []string{"", " ", "one", " two  words ", "tab\tand\nnew\vline\fx\ry", "non\u00a0breaking\u0085next\u2003em",
		"café naïve 猫 🐈", "bad\xffbyte \xfe", "\x80", "a\u3000b"} {
		assert.Equal(t, want(s), countWords(s), "%q", s)
	}
}
