package msgstore

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Whatever the fast reader of a page body accepts, encoding/json's reading of it
// (decodePageBodyJSON) accepts too and reads the same: checked over seeded generated
// pages, and over each of them mutated where a hand-made or damaged body would differ
// (members moved, repeated or renamed, whitespace, a truncated or extended end, bytes
// changed). The generated pages themselves must take the fast path.
func TestPageBodyFastReadAgreesWithEncodingJSON(t *testing.T) {
	fast := 0
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := randomPageBody(rng)
		enc, err := EncodePageBody(b)
		require.NoError(t, err)
		got, ok := decodePageBodyFast(enc)
		require.True(t, ok, "seed %d: a page as EncodePageBody writes it takes the fast path", seed)
		want, err := decodePageBodyJSON(enc)
		require.NoError(t, err)
		require.Equal(t, want, got, "seed %d", seed)
		for m := range 12 {
			body := mutatePageBody(rng, string(enc))
			got, ok := decodePageBodyFast([]byte(body))
			if !ok {
				continue
			}
			fast++
			want, err := decodePageBodyJSON([]byte(body))
			require.NoError(t, err, "seed %d mutation %d: the fast path took a body encoding/json refuses: %s", seed, m, body)
			require.Equal(t, want, got, "seed %d mutation %d: %s", seed, m, body)
		}
	}
	t.Logf("%d mutated bodies taken by the fast path", fast)
	require.Positive(t, fast, "some mutations keep a body readable by the fast path")
}

func randomPageBody(rng *rand.Rand) PageBody {
	texts := []string{"hej", "a \"quoted\" word", "tab\there\nnewline", "\u2028 ✓ 😀", `back\slash`, "", "</script>&", "\x01ctl"}
	pick := func() string { return texts[rng.IntN(len(texts))] + strings.Repeat("x", rng.IntN(4)) }
	b := PageBody{ChatID: "chat-" + pick(), Lineage: "run-" + pick(), Seq: rng.Int64N(1000), First: rng.Int64N(1 << 40)}
	for i := range rng.IntN(6) {
		m := chat.Message{MessageID: "m" + pick() + string(rune('a'+i)), Role: []chat.Role{chat.RoleUser, chat.RoleAssistant, chat.RoleTool, chat.RoleSystem}[rng.IntN(4)]}
		if rng.IntN(2) == 0 {
			m.CreatedAt = time.Unix(rng.Int64N(2e9), rng.Int64N(1e9)).UTC()
		}
		if rng.IntN(3) == 0 {
			m.AgentID, m.AuthorName = "agent-"+pick(), pick()
		}
		if rng.IntN(4) == 0 {
			m.Usage = &chat.Usage{InputTokens: rng.IntN(1000), OutputTokens: rng.IntN(1000), CachedTokens: rng.IntN(3), Model: pick()}
		}
		m.Incomplete = rng.IntN(5) == 0
		if rng.IntN(6) > 0 { // else a stub
			m.Contents = []chat.Content{}
			for range rng.IntN(4) {
				switch rng.IntN(4) {
				case 0:
					m.Contents = append(m.Contents, chat.Text(pick()))
				case 1:
					m.Contents = append(m.Contents, chat.Content{Type: chat.ContentFunctionCall, CallID: "call_" + pick(), Name: "f", Arguments: `{"q":"` + pick() + `"}`})
				case 2:
					m.Contents = append(m.Contents, chat.Content{Type: chat.ContentFunctionResult, CallID: "call_" + pick(), Result: pick(), Error: []string{"", "boom"}[rng.IntN(2)]})
				default:
					m.Contents = append(m.Contents, chat.Content{Type: "x-unknown", Raw: []byte(`{"type":"x-unknown","n":1}`)})
				}
			}
		}
		b.Messages = append(b.Messages, m)
	}
	return b
}

// mutatePageBody changes body in one of the ways a body not written by EncodePageBody
// could differ from one that was.
func mutatePageBody(rng *rand.Rand, body string) string {
	at := rng.IntN(len(body) + 1)
	pieces := []string{messagesKey, `,"Messages":[]`, `,"messages":[]`, `,"first":9`, `,"v":2`, `,"level":1`, " ", "]", "}", ",", `"`, `\`, "null", `,"messages":null`}
	switch rng.IntN(6) {
	case 0: // insert a piece anywhere
		return body[:at] + pieces[rng.IntN(len(pieces))] + body[at:]
	case 1: // a piece before the end
		return strings.TrimSuffix(body, "}") + pieces[rng.IntN(len(pieces))] + "}"
	case 2: // drop a byte
		if at == len(body) {
			at--
		}
		return body[:at] + body[at+1:]
	case 3: // members after the messages, or the messages first
		if i := strings.Index(body, messagesKey); i > 0 {
			head, msgs := body[1:i], body[i+1:len(body)-1]
			return "{" + msgs + "," + head + "}"
		}
	case 4: // a repeated messages member, before the real one
		if i := strings.Index(body, messagesKey); i > 0 {
			return body[:i] + `,"messages":[{"contents":[],"messageId":"z","role":"user"}]` + body[i:]
		}
	}
	return body + pieces[rng.IntN(len(pieces))] // extend the end
}

// A page whose message is as large as a page keeps inline (wire.PageBodyBytes encoded,
// the text full of characters JSON escapes) and the stub of one just over it take the
// fast path and read as encoding/json reads them.
func TestPageBodyFastReadAtThePageBodyLimit(t *testing.T) {
	m := chat.TextMessage("m-limit", chat.RoleAssistant, "", "")
	text := strings.Repeat("<\"é\n", (wire.PageBodyBytes-wire.MessageBytes(m))/16)
	text += strings.Repeat("x", wire.PageBodyBytes-wire.MessageBytes(chat.TextMessage("m-limit", chat.RoleAssistant, "", text)))
	m = chat.TextMessage("m-limit", chat.RoleAssistant, "", text)
	require.Equal(t, wire.PageBodyBytes, wire.MessageBytes(m))
	stub := chat.Message{MessageID: "m-over", Role: chat.RoleAssistant} // its body, one byte more, in a row of its own
	enc, err := EncodePageBody(PageBody{ChatID: "c", Lineage: "run", Seq: 1, First: 7, Messages: []chat.Message{m, stub}})
	require.NoError(t, err)
	got, ok := decodePageBodyFast(enc)
	require.True(t, ok)
	want, err := decodePageBodyJSON(enc)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, text, got.Messages[0].Contents[0].Text)
	require.Nil(t, got.Messages[1].Contents)
}
