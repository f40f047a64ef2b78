package workflows_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
	"github.com/agentchat/agentchat/workflows"
)

// MessageBytes is computed without encoding; it must equal len(json.Marshal(m)) for every
// message, whatever its strings hold.
func TestMessageBytesIsTheEncodedLength(t *testing.T) {
	pieces := []string{"a", "é", "日本", "\"", "\\", "\n", "\t", "\b", "\f", "\r", "\x00", "\x1f", "<", ">", "&",
		"\u2028", "\u2029", "\xff", "\xe2\x80", "\ufffd", "😀", " ", "/"}
	str := func(r *rand.Rand) string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		m := chat.Message{MessageID: str(r), Role: chat.Role(str(r)), AuthorName: str(r), AgentID: str(r)}
		if i%2 == 0 {
			m.CreatedAt = time.Date(2026, 12, 1, 20, 0, 0, r.IntN(1e9), time.UTC)
		}
		if i%3 == 0 { // usage with and without its optional members, counts of any length
			m.Usage = &chat.Usage{InputTokens: r.IntN(1 << r.IntN(40)), OutputTokens: r.IntN(1 << r.IntN(20))}
			if i%2 == 0 {
				m.Usage.Model, m.Usage.CachedTokens = str(r), r.IntN(1<<r.IntN(30))
			}
		}
		if i%5 != 0 {
			m.Contents = []chat.Content{}
			for range r.IntN(4) {
				switch r.IntN(5) {
				case 0:
					m.Contents = append(m.Contents, chat.Text(str(r)))
				case 1:
					m.Contents = append(m.Contents, chat.Content{Type: chat.ContentImage, URI: str(r), Data: str(r), MediaType: str(r)})
				case 2:
					m.Contents = append(m.Contents, chat.Content{Type: chat.ContentFunctionCall, CallID: str(r), Name: str(r), Arguments: str(r)})
				case 3:
					m.Contents = append(m.Contents, chat.Content{Type: chat.ContentFunctionResult, CallID: str(r), Result: str(r), Error: str(r)})
				default:
					m.Contents = append(m.Contents, chat.Content{Type: "custom", Raw: json.RawMessage(`{"type": "custom", "x": "<a>"}`)})
				}
			}
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		require.Equal(t, len(b), wire.MessageBytes(m), "%s", b)
		m.Contents = nil
		b, _ = json.Marshal(m)
		require.Equal(t, len(b), wire.StubBytes(m), "%s", b)
	}
}

// What a continue-as-new carries is measured without encoding it; the measure is exact.
func TestCarryBytesIsTheEncodedLength(t *testing.T) {
	at := time.Date(2026, 12, 1, 20, 0, 0, 123, time.UTC)
	for _, pending := range [][]chat.Message{nil, {chat.TextMessage("p1", chat.RoleUser, "A<", "queued\n")}} {
		in := wire.AgentChatInput{Participants: []string{"helper"}, Carry: &wire.Carried{
			History: []chat.Message{chat.TextMessage("m1", chat.RoleUser, "Alice", "hi & bye"), {MessageID: "m1/1", Role: chat.RoleAssistant, CreatedAt: at}},
			Pending: pending, Runs: 2,
			ToolRuns: []wire.ToolRun{{CallID: "c<1", Name: "lookup", Arguments: `{"q":"a&b"}`,
				Result: chat.Content{Type: chat.ContentFunctionResult, CallID: "c<1", Result: "found\n"}}}}}
		b, err := json.Marshal(in)
		require.NoError(t, err)
		require.Equal(t, len(b), workflows.CarryBytes(in))
	}
}
