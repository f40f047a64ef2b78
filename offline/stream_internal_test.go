package offline

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"":                      nil,
		"   ":                   {"   "},
		"one":                   {"one"},
		"[offline] a: hi":       {"[offline]", " a:", " hi"},
		"  lead and trail \n":   {"  lead", " and", " trail \n"},
		"tabs\tand\nnew  lines": {"tabs", "\tand", "\nnew", "  lines"},
	} {
		assert.Equal(t, want, splitWords(in), "%q", in)
	}
}

func TestSplitRunes(t *testing.T) {
	assert.Nil(t, splitRunes("", 3))
	assert.Equal(t, []string{"abc", "def", "g"}, splitRunes("abcdefg", 3))
	assert.Equal(t, []string{"åäö", "€"}, splitRunes("åäö€", 3))
}

// FuzzSplitWords checks that streaming never changes a text: the pieces join to it, and
// each holds exactly one word.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"", " ", "a b", "  x\ty \n", "[offline] a: \u00a0 ok\u2003!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pieces := splitWords(s)
		if strings.Join(pieces, "") != s {
			t.Fatalf("pieces %q do not join to %q", pieces, s)
		}
		if len(strings.Fields(s)) == 0 {
			return
		}
		if len(pieces) != len(strings.Fields(s)) {
			t.Fatalf("%d pieces for %d words: %q", len(pieces), len(strings.Fields(s)), pieces)
		}
		for _, p := range pieces {
			if len(strings.Fields(p)) != 1 {
				t.Fatalf("piece %q of %q is not one word", p, s)
			}
		}
	})
}

// FuzzSplitRunes checks argument fragments join to the arguments and never split a rune.
func FuzzSplitRunes(f *testing.F) {
	f.Add(`{"city":"Malmö"}`, 3)
	f.Add("", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n <= 0 || n > 64 {
			return
		}
		pieces := splitRunes(s, n)
		if strings.Join(pieces, "") != s {
			t.Fatalf("pieces %q do not join to %q", pieces, s)
		}
		for _, p := range pieces {
			if p == "" || utf8.RuneCountInString(p) > n {
				t.Fatalf("piece %q of %q: want 1..%d runes", p, s, n)
			}
			if utf8.ValidString(s) && !utf8.ValidString(p) {
				t.Fatalf("piece %q splits a rune of %q", p, s)
			}
		}
	})
}

// Every chunk of a stream is encoded as json.Marshal encodes it, the text chunks from
// the template too: seeded answers with texts of every kind of character encoding/json
// escapes, tool calls, usage on and off, and ids and models that hold the template's
// sentinel (the stream is then encoded whole).
func TestTextChunksEncodeAsJSONMarshal(t *testing.T) {
	pieces := []string{"word", " <b>&</b>", " \"q\"", " back\\slash", " \u2028\u2029", " \x00\x01\x1f", " åäö 😀", " \xff bad", "\t", " \\u0000", " null"}
	templated := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 11))
		var text strings.Builder
		for range rng.IntN(40) {
			text.WriteString(pieces[rng.IntN(len(pieces))])
		}
		ans := answer{id: "chatcmpl-offline-" + strconv.Itoa(rng.IntN(100)), created: rng.Int64N(2e9), model: ModelID,
			content: text.String(), finish: openai.FinishReasonStop}
		switch rng.IntN(7) {
		case 0:
			ans.model = "m\x00del"
		case 1:
			ans.id = "id-\x00"
		case 2:
			ans.model = "\x00" // encoded exactly as the sentinel
		case 3:
			ans.id = "\x00"
		}
		if rng.IntN(3) == 0 {
			ans.toolCalls = []openai.ToolCall{{ID: "call_1", Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "f", Arguments: `{"q":"` + text.String() + `"}`}}}
			ans.finish = openai.FinishReasonToolCalls
		}
		var enc textChunks
		for i, c := range streamChunks(ans, rng.IntN(2) == 0) {
			want, err := json.Marshal(c)
			require.NoError(t, err)
			got, err := enc.encode(c)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "seed %d chunk %d", seed, i)
		}
		if enc.head != nil && !enc.whole {
			templated++
		}
	}
	assert.Greater(t, templated, 100, "most streams use the template")
}
