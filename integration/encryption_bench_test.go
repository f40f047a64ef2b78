package integration_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/bench"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
)

// Encryption on and off, on the real dev server (README, Performance: goal within
// 1.1x). Run:
//
//	go test -run '^$' -bench 'Encryption' -benchtime 200x ./integration          # the turn
//	go test -run '^$' -bench 'EncryptionTransfer' -benchtime 5x ./integration    # 10,000 messages

// encryptionModes are the two sides of each benchmark.
func encryptionModes(b *testing.B) map[string]*keyring.Ring {
	f, err := keyring.Generate("k1")
	require.NoError(b, err)
	r, err := keyring.New(f)
	require.NoError(b, err)
	return map[string]*keyring.Ring{"off": nil, "on": r}
}

// BenchmarkEncryptionTurn is one SendMessage turn of a thread (offline model, no added
// latency), with the codec off and on.
func BenchmarkEncryptionTurn(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		ring := encryptionModes(b)[mode]
		b.Run(mode, func(b *testing.B) {
			h := testenv.New(b, testenv.Options{Keys: ring})
			id := testenv.ChatID(b)
			ctx := context.Background()
			_, err := h.Client.Start(ctx, agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
			require.NoError(b, err)
			b.ResetTimer()
			for i := range b.N {
				if _, err := h.Client.Send(ctx, id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("m%d", i), Text: "Hello, how are you?"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncryptionTransfer10k exports a chat of 10,000 messages (Client.ExportSealed:
// the document, in the envelope when encryption is on, as starter export --out
// writes it) and imports the written file into a new chat, with encryption off and on.
func BenchmarkEncryptionTransfer10k(b *testing.B) {
	enc, _, err := chatstate.Encode(bench.Document(bench.History(10_000)))
	require.NoError(b, err)
	for _, mode := range []string{"off", "on"} {
		ring := encryptionModes(b)[mode]
		b.Run(mode, func(b *testing.B) {
			h := testenv.New(b, testenv.Options{Keys: ring})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			dir := b.TempDir()
			src := testenv.ChatID(b)
			path := filepath.Join(dir, "seed.json")
			require.NoError(b, os.WriteFile(path, enc, 0o600))
			_, err := h.Client.Import(ctx, agentchat.ImportOptions{ChatID: src, Path: path})
			require.NoError(b, err)
			var export, imp time.Duration
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				e, err := h.Client.ExportSealed(ctx, src) // what starter export --out writes
				if err != nil {
					b.Fatal(err)
				}
				doc := e.Bytes
				export += time.Since(start)
				p := filepath.Join(dir, fmt.Sprintf("doc-%d.json", i))
				if err := os.WriteFile(p, doc, 0o600); err != nil {
					b.Fatal(err)
				}
				start = time.Now()
				st, err := h.Client.Import(ctx, agentchat.ImportOptions{ChatID: fmt.Sprintf("%s-%d", src, i), Path: p})
				if err != nil {
					b.Fatal(err)
				}
				imp += time.Since(start)
				if st.MessageCount != 10_000 {
					b.Fatalf("imported %d messages", st.MessageCount)
				}
			}
			b.ReportMetric(float64(export.Milliseconds())/float64(b.N), "export-ms/op")
			b.ReportMetric(float64(imp.Milliseconds())/float64(b.N), "import-ms/op")
		})
	}
}
