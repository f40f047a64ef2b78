package chatstate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/chat"
)

var words = strings.Fields(`the order shipped yesterday and should arrive on Tuesday; please check
	whether customer's "priority" flag is set — café naïve résumé 猫 🐈 <b>bold</b> & more,
	summary: totals 42 items at 3.50 each. Lorem ipsum dolor sit amet consectetur adipiscing`)

// text returns n bytes or so of prose, sometimes with a newline.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			if r.IntN(12) == 0 {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// benchMessages returns a realistic chat of n messages: user and assistant texts of
// 100–1000 bytes, one turn in five with a tool call and its result.
func benchMessages(n int) []chat.Message {
	r := rand.New(rand.NewPCG(1, 2))
	ms := make([]chat.Message, 0, n)
	for turn := 0; len(ms) < n; turn++ {
		id := fmt.Sprintf("turn-%d", turn)
		ms = append(ms, msg(id, chat.RoleUser, "Alice", "", len(ms), chat.Text(text(r, 100+r.IntN(900)))))
		if r.IntN(5) == 0 && len(ms)+3 <= n {
			callID := fmt.Sprintf("call_%d", turn)
			args := fmt.Sprintf(`{"query":%q,"limit":%d}`, text(r, 20+r.IntN(100)), r.IntN(50))
			ms = append(ms,
				msg(id+"/1", chat.RoleAssistant, "Writer", "writer", len(ms), call(callID, "search", args)),
				msg(id+"/2", chat.RoleTool, "", "", len(ms), result(callID, text(r, 100+r.IntN(900)))))
		}
		if len(ms) < n {
			ms = append(ms, msg(fmt.Sprintf("%s/%d", id, 3), chat.RoleAssistant, "Writer", "writer", len(ms), chat.Text(text(r, 100+r.IntN(900)))))
		}
	}
	return ms
}

func benchDocument(n int) Document {
	d := goldenDocs()["v1-group-chat.json"]
	d.History = benchMessages(n)
	return d
}

// TestDocumentSize10k: the document is at most 1.2 times the plain JSON of its messages
// (the target of the performance issue).
func TestDocumentSize10k(t *testing.T) {
	d := benchDocument(10000)
	enc, _, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(d.History)
	ratio := float64(len(enc)) / float64(len(plain))
	t.Logf("document %d bytes, plain messages %d bytes, ratio %.3f", len(enc), len(plain), ratio)
	if ratio > 1.2 {
		t.Errorf("document is %.2f times the plain JSON of its messages, want at most 1.2", ratio)
	}
	if _, _, err := Decode(enc); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkEncode10k(b *testing.B) {
	d := benchDocument(10000)
	plain, _ := json.Marshal(d.History)
	var n int
	for b.Loop() {
		enc, _, err := Encode(d)
		if err != nil {
			b.Fatal(err)
		}
		n = len(enc)
	}
	b.SetBytes(int64(n))
	b.ReportMetric(float64(n), "doc-bytes")
	b.ReportMetric(float64(n)/float64(len(plain)), "size-ratio")
}

func BenchmarkDecode10k(b *testing.B) {
	enc, _, err := Encode(benchDocument(10000))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(enc)))
	b.ReportMetric(float64(len(enc)), "doc-bytes")
}

// BenchmarkDecodeIndented10k reads a document not in canonical form: the general path.
func BenchmarkDecodeIndented10k(b *testing.B) {
	enc, _, err := Encode(benchDocument(10000))
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(enc, &m)
	in, _ := json.MarshalIndent(m, "", "  ")
	for b.Loop() {
		if _, _, err := Decode(in); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(in)))
}

func BenchmarkBaselineMarshal10k(b *testing.B) {
	ms := benchMessages(10000)
	var n int
	for b.Loop() {
		out, err := json.Marshal(ms)
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.SetBytes(int64(n))
	b.ReportMetric(float64(n), "plain-bytes")
}

func BenchmarkBaselineUnmarshal10k(b *testing.B) {
	plain, _ := json.Marshal(benchMessages(10000))
	for b.Loop() {
		var ms []chat.Message
		if err := json.Unmarshal(plain, &ms); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(plain)))
	b.ReportMetric(float64(len(plain)), "plain-bytes")
}

// BenchmarkRatios10k runs Encode, the baseline Marshal, Decode and the baseline
// Unmarshal in turn, so that all see the same machine load, and reports the ratios of
// their fastest runs. Targets of the performance issue: at most 3 each.
func BenchmarkRatios10k(b *testing.B) {
	d := benchDocument(10000)
	enc, _, _ := Encode(d)
	plain, _ := json.Marshal(d.History)
	runs := []func(){
		func() { _, _, _ = Encode(d) },
		func() { _, _ = json.Marshal(d.History) },
		func() { _, _, _ = Decode(enc) },
		func() { var ms []chat.Message; _ = json.Unmarshal(plain, &ms) },
	}
	best := make([]time.Duration, len(runs))
	for i := range best {
		best[i] = time.Hour
	}
	for b.Loop() {
		for i, run := range runs {
			start := time.Now()
			run()
			best[i] = min(best[i], time.Since(start))
		}
	}
	b.ReportMetric(float64(best[0])/float64(best[1]), "encode/marshal")
	b.ReportMetric(float64(best[2])/float64(best[3]), "decode/unmarshal")
	b.ReportMetric(float64(len(enc))/float64(len(plain)), "size-ratio")
}
