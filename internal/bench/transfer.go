package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
)

var transferWords = strings.Fields(`the order shipped yesterday and should arrive on Tuesday please check
	whether the customer's "priority" flag is set — café naïve résumé 猫 <b>bold</b> & more,
	summary: totals 42 items at 3.50 each; refund policy allows returns within thirty days
	tracking number warehouse delay apologise escalate invoice address update confirm`)

// Prose returns a deterministic text of about n bytes, sometimes with a newline.
func Prose(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			if r.IntN(15) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(transferWords[r.IntN(len(transferWords))])
	}
	return b.String()
}

// History returns n messages of a helper thread: user (Alice) and assistant (helper)
// in turn, texts of 100–1000 bytes, one second apart. Same n, same messages.
func History(n int) []chat.Message {
	ms := make([]chat.Message, 0, n)
	_ = historyOf(n)(func(m chat.Message) error {
		ms = append(ms, m)
		return nil
	})
	return ms
}

// historyOf yields the messages History(n) returns, one at a time, so that a
// document of any length is written without holding its history.
func historyOf(n int) chatstate.History {
	return func(yield func(chat.Message) error) error {
		r := rand.New(rand.NewPCG(42, 10_000))
		start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
		count := 0
		for i := 0; count < n; i++ {
			id := fmt.Sprintf("turn-%05d", i)
			u := chat.TextMessage(id, chat.RoleUser, "Alice", Prose(r, 100+r.IntN(900)))
			u.CreatedAt = start.Add(time.Duration(count) * time.Second)
			if err := yield(u); err != nil {
				return err
			}
			if count++; count == n {
				break
			}
			a := chat.TextMessage(id+"/1", chat.RoleAssistant, "Helper", Prose(r, 100+r.IntN(900)))
			a.AgentID, a.CreatedAt = "helper", start.Add(time.Duration(count)*time.Second)
			if err := yield(a); err != nil {
				return err
			}
			count++
		}
		return nil
	}
}

// Document is the document of a helper thread holding msgs, as an export of a chat
// with the default strategies writes it.
func Document(msgs []chat.Message) chatstate.Document {
	return chatstate.Document{
		SchemaVersion: chatstate.SchemaVersion, ChatID: "bench-transfer",
		ExportedAt:   time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC),
		Source:       chatstate.Source{Namespace: "default", WorkflowID: "bench-transfer", RunID: "run-1", Cluster: "local"},
		History:      msgs,
		Participants: []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}},
		Channels: []chatstate.Channel{{ChannelKey: chat.ChannelKey("chat_history", "reducer=none"),
			ChannelType: "chat_history", ChannelState: json.RawMessage(`{}`)}},
		Strategies: chatstate.Strategies{
			Selection:   chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":0}`)},
		},
	}
}

// transfer measures Client.Export of a chat of Messages messages and Client.Import of
// the exported bytes into a new chat, against json.Marshal and json.Unmarshal of the
// same []chat.Message, and the document's size against that JSON's.
func (r *runner) transfer(ctx context.Context) error {
	e, sz := r.e, r.sz
	msgs := History(sz.Messages)
	enc, _, err := chatstate.Encode(Document(msgs))
	if err != nil {
		return fmt.Errorf("encode the generated document: %w", err)
	}
	src := newChatID("transfer")
	if _, err := r.importDoc(ctx, src, enc); err != nil { // set-up, not timed
		return err
	}
	var exports, imports []time.Duration
	var doc []byte
	stop, err := r.startProfile("transfer", "agentchat")
	if err != nil {
		return err
	}
	defer func() { _ = stop() }()
	var plain []byte
	var marshal, unmarshal []time.Duration
	for i := range sz.TransferRounds {
		// The floor in the same round, under the same conditions.
		p, m, u, err := jsonRound(msgs)
		if err != nil {
			return err
		}
		plain, marshal, unmarshal = p, append(marshal, m), append(unmarshal, u)
		start := time.Now()
		if doc, _, err = e.Chats.Export(ctx, src); err != nil {
			return err
		}
		exports = append(exports, time.Since(start))
		d, err := r.importDoc(ctx, fmt.Sprintf("%s-%d", src, i), doc)
		if err != nil {
			return err
		}
		imports = append(imports, d)
	}
	if err := stop(); err != nil {
		return err
	}
	mb := func(n int) float64 { return float64(n) / (1 << 20) }
	name := fmt.Sprintf("%d messages", sz.Messages)
	r.t.Add(
		Row{Group: "transfer", Name: "Export, " + name + " (ms)", Value: median(exports), Floor: median(marshal), Target: AtMost(2)},
		Row{Group: "transfer", Name: "Import, " + name + " (ms)", Value: median(imports), Floor: median(unmarshal), Target: AtMost(2)},
		Row{Group: "transfer", Name: "Document size, " + name + " (MB)", Value: mb(len(doc)), Floor: mb(len(plain)), Target: AtMost(1.2)},
	)
	r.t.Note("transfer: floor = json.Marshal / json.Unmarshal of the same []chat.Message; "+
		"export = Client.Export (queries + canonical encoding), import = Client.Import by file (decode + restore until Describe answers); "+
		"median of %d rounds, each timing the floor, an export and an import", sz.TransferRounds)
	return nil
}

// importDoc imports doc into a new chat id by file (a document over 1 MiB must go by
// path) and returns how long Client.Import took (it reads the file itself).
func (r *runner) importDoc(ctx context.Context, id string, doc []byte) (time.Duration, error) {
	r.e.track(id)
	path := filepath.Join(r.e.dir, id+".json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		return 0, err
	}
	defer os.Remove(path)
	start := time.Now()
	st, err := r.e.Chats.Import(ctx, agentchat.ImportOptions{ChatID: id, Path: path})
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if st.MessageCount != r.sz.Messages {
		return 0, fmt.Errorf("imported chat %s has %d messages, want %d", id, st.MessageCount, r.sz.Messages)
	}
	return d, nil
}

// jsonRound returns the messages' JSON and how long json.Marshal and json.Unmarshal
// took on them.
func jsonRound(msgs []chat.Message) (plain []byte, marshal, unmarshal time.Duration, err error) {
	start := time.Now()
	if plain, err = json.Marshal(msgs); err != nil {
		return nil, 0, 0, err
	}
	marshal = time.Since(start)
	var back []chat.Message
	start = time.Now()
	if err = json.Unmarshal(plain, &back); err != nil {
		return nil, 0, 0, err
	}
	return plain, marshal, time.Since(start), nil
}
