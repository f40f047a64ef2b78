package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/wire"
)

// Pages written from the bytes chatstate.DecodeKeepingBytes kept are the pages
// written by encoding the messages: on seeded generated histories (texts, tool rounds,
// unknown contents, authors, times, and messages over wire.PageBodyBytes, which go to
// rows of their own and leave stubs), the two stores end with the same index, page
// for page and digest for digest, and read back the same messages.
func TestWritePagesFromKeptBytesAsEncoded(t *testing.T) {
	ctx := context.Background()
	open := func() *stores {
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "messages.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return &stores{byName: map[string]msgstore.Store{"sqlite": st}, defaultStore: "sqlite"}
	}
	encoded, copied := open(), open()
	defer func(old int) { pageBatchBytes = old }(pageBatchBytes)
	pageBatchBytes = 64 << 10 // several batches
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 99))
		history := generatedHistory(r, 50+r.IntN(400))
		doc := chatstate.Document{SchemaVersion: chatstate.SchemaVersion, ChatID: "src", ExportedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Source: chatstate.Source{Namespace: "default", WorkflowID: "src", RunID: "r", Cluster: "local"}, History: history,
			Participants: []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}},
			Channels:     []chatstate.Channel{{ChannelKey: chat.ChannelKey("chat_history", "reducer=none"), ChannelType: "chat_history", ChannelState: json.RawMessage(`{}`)}},
			Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
				Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":0}`)}}}
		b, _, err := chatstate.Encode(doc)
		require.NoError(t, err)
		got, _, raw, err := chatstate.DecodeKeepingBytes(b)
		require.NoError(t, err)
		require.NotNil(t, raw, "seed %d: a document as Encode writes it keeps its bytes", seed)
		chatID := fmt.Sprintf("chat-%d", seed)
		cuts := []int{}
		for n := len(got.History); n > 0; n -= min(n, 64) {
			cuts = append(cuts, min(n, 64))
		}
		in := wire.WritePagesInput{ChatID: chatID, Lineage: "L", Cuts: cuts, Messages: got.History, Fanout: 4}
		want, err := encoded.writePages(ctx, in, nil)
		require.NoError(t, err)
		have, err := copied.writePages(ctx, in, raw)
		require.NoError(t, err)
		require.Equal(t, want, have, "seed %d", seed)
		refs := append([]wire.PageRef(nil), have.Pages...)
		for i := range refs {
			refs[i].Lineage = "L"
		}
		back, err := copied.readPages(ctx, chatID, "", refs, 0, 0)
		require.NoError(t, err)
		require.Len(t, back, len(got.History))
		for i := range back {
			if back[i].Contents == nil { // a stub: its body has a row of its own
				continue
			}
			assert.Equal(t, got.History[i], back[i], "seed %d message %d", seed, i)
		}
	}
}

// generatedHistory is n messages of a chat: user turns, assistant replies (some with
// tool calls, each answered), unknown contents, and now and then a message over
// wire.PageBodyBytes.
func generatedHistory(r *rand.Rand, n int) []chat.Message {
	words := strings.Fields(`the order shipped "quoted" café 猫 <b>bold</b> & more \ back\slash tab	here`)
	prose := func(k int) string {
		var sb strings.Builder
		for sb.Len() < k {
			sb.WriteString(words[r.IntN(len(words))] + " ")
		}
		return strings.TrimSpace(sb.String())
	}
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	var out []chat.Message
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprintf("turn-%d", i)
		u := chat.TextMessage(id, chat.RoleUser, "Alice", prose(20+r.IntN(300)))
		if r.IntN(40) == 0 {
			u = chat.TextMessage(id, chat.RoleUser, "Alice", prose(wire.PageBodyBytes+1000))
		}
		u.CreatedAt = at.Add(time.Duration(len(out)) * time.Second)
		out = append(out, u)
		if r.IntN(4) == 0 {
			call := fmt.Sprintf("call_%d", i)
			a := chat.Message{MessageID: id + "/1", Role: chat.RoleAssistant, AuthorName: "Helper", AgentID: "helper",
				Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: call, Name: "lookup", Arguments: `{"q":"` + prose(10) + `"}`}}}
			res := chat.Message{MessageID: id + "/2", Role: chat.RoleTool, Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: call, Result: prose(40)}}}
			out = append(out, a, res)
		}
		a := chat.TextMessage(id+"/r", chat.RoleAssistant, "Helper", prose(20+r.IntN(600)))
		a.AgentID = "helper"
		out = append(out, a)
	}
	return out[:n]
}
