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
// The two sides run on one dev server, each with its own worker, one after the other
// in every iteration (off, then on, then on first in the next), so that the server's
// growing store and the process's state weigh on both alike.
func BenchmarkEncryptionTransfer10k(b *testing.B) {
	enc, _, err := chatstate.Encode(bench.Document(bench.History(10_000)))
	require.NoError(b, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := b.TempDir()
	seed := filepath.Join(dir, "seed.json")
	require.NoError(b, os.WriteFile(seed, enc, 0o600))
	type side struct {
		h           *testenv.Harness
		src         string
		export, imp time.Duration
	}
	modes := encryptionModes(b)
	sides := map[string]*side{}
	for _, mode := range []string{"off", "on"} {
		s := &side{h: testenv.New(b, testenv.Options{Keys: modes[mode]}), src: testenv.ChatID(b) + "-" + mode}
		_, err := s.h.Client.Import(ctx, agentchat.ImportOptions{ChatID: s.src, Path: seed})
		require.NoError(b, err)
		sides[mode] = s
	}
	b.ResetTimer()
	for i := range b.N {
		order := []string{"off", "on"}
		if i%2 == 1 {
			order = []string{"on", "off"}
		}
		for _, mode := range order {
			s := sides[mode]
			start := time.Now()
			e, err := s.h.Client.ExportSealed(ctx, s.src) // what starter export --out writes
			if err != nil {
				b.Fatal(err)
			}
			s.export += time.Since(start)
			p := filepath.Join(dir, fmt.Sprintf("doc-%s-%d.json", mode, i))
			if err := os.WriteFile(p, e.Bytes, 0o600); err != nil {
				b.Fatal(err)
			}
			start = time.Now()
			st, err := s.h.Client.Import(ctx, agentchat.ImportOptions{ChatID: fmt.Sprintf("%s-%d", s.src, i), Path: p})
			if err != nil {
				b.Fatal(err)
			}
			s.imp += time.Since(start)
			if st.MessageCount != 10_000 {
				b.Fatalf("%s: imported %d messages", mode, st.MessageCount)
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	off, on := sides["off"], sides["on"]
	b.ReportMetric(ms(off.export), "export-off-ms")
	b.ReportMetric(ms(on.export), "export-on-ms")
	b.ReportMetric(float64(on.export)/float64(off.export), "export-ratio")
	b.ReportMetric(ms(off.imp), "import-off-ms")
	b.ReportMetric(ms(on.imp), "import-on-ms")
	b.ReportMetric(float64(on.imp)/float64(off.imp), "import-ratio")
}
