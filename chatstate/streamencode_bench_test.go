package chatstate

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/agentchat/agentchat/chat"
)

// benchPool is a pool of realistic messages whose copies make long histories.
var benchPool = sync.OnceValue(func() []chat.Message { return benchMessages(1000) })

// poolMessage returns the i-th message of a history made of copies of benchPool, each
// copy with its own message and call ids.
func poolMessage(i int) chat.Message {
	pool := benchPool()
	m := pool[i%len(pool)]
	copyN := i / len(pool)
	m.MessageID = fmt.Sprintf("%s/c%d", m.MessageID, copyN)
	m.Contents = append([]chat.Content(nil), m.Contents...)
	for j := range m.Contents {
		if m.Contents[j].CallID != "" {
			m.Contents[j].CallID = fmt.Sprintf("%s_c%d", m.Contents[j].CallID, copyN)
		}
	}
	return m
}

// poolHistory yields n messages made by poolMessage, holding none of them.
func poolHistory(n int) History {
	return func(yield func(chat.Message) error) error {
		for i := range n {
			if err := yield(poolMessage(i)); err != nil {
				return err
			}
		}
		return nil
	}
}

// discard is an io.WriterAt that keeps nothing.
type discard struct{}

func (discard) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }

// peakHeap runs f and returns the highest heap in use while it ran, above the heap in
// use before, sampled every 200µs (runtime/metrics, which does not stop the world), and
// the bytes f allocated.
func peakHeap(f func()) (peak, allocated uint64) {
	runtime.GC()
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(samples)
	base, alloc0 := samples[0].Value.Uint64(), samples[1].Value.Uint64()
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var top uint64
		for {
			metrics.Read(s)
			top = max(top, s[0].Value.Uint64())
			select {
			case <-done:
				result <- top
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	f()
	metrics.Read(samples)
	close(done)
	top := max(<-result, samples[0].Value.Uint64())
	if top < base {
		return 0, samples[1].Value.Uint64() - alloc0
	}
	return top - base, samples[1].Value.Uint64() - alloc0
}

// BenchmarkEncoderHeap compares the heap of Encode, given the history as a slice, with
// that of Encoder, given it one message at a time, for 10,000 and 100,000 messages.
// Both start from nothing: Encode's heap counts the history it needs in memory and
// the document it returns. Metrics: peak-heap-MB (the highest heap in use above the
// start), peak-B/msg (that per message) and alloc-B/msg (bytes allocated per message).
// Run with -benchtime=1x.
func BenchmarkEncoderHeap(b *testing.B) {
	d := goldenDocs()["v1-group-chat.json"]
	d.History = nil
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("Encode/%d", n), func(b *testing.B) {
			var peak, alloc uint64
			for b.Loop() {
				peak, alloc = peakHeap(func() {
					d := d
					d.History = make([]chat.Message, n)
					for i := range n {
						d.History[i] = poolMessage(i)
					}
					if _, _, err := Encode(d); err != nil {
						b.Fatal(err)
					}
				})
			}
			reportHeap(b, n, peak, alloc)
		})
		b.Run(fmt.Sprintf("Encoder/%d", n), func(b *testing.B) {
			var peak, alloc uint64
			for b.Loop() {
				peak, alloc = peakHeap(func() {
					if _, _, err := NewEncoder(discard{}).Encode(d, poolHistory(n)); err != nil {
						b.Fatal(err)
					}
				})
			}
			reportHeap(b, n, peak, alloc)
		})
	}
}

func reportHeap(b *testing.B, n int, peak, alloc uint64) {
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak)/float64(n), "peak-B/msg")
	b.ReportMetric(float64(alloc)/float64(n), "alloc-B/msg")
}

// BenchmarkEncoder10k is Encoder's time on the 10,000-message benchmark document, to
// compare with BenchmarkEncode10k.
func BenchmarkEncoder10k(b *testing.B) {
	d := benchDocument(10000)
	history := d.History
	d.History = nil
	var n int64
	for b.Loop() {
		var err error
		if n, _, err = NewEncoder(discard{}).Encode(d, SliceHistory(history)); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(n)
}

// BenchmarkDecoderHeap compares the heap of Decode, given the file's bytes, with that
// of Decoder reading the file (Header, then History yielding each message to
// nothing), for 10,000 and 100,000 messages. Metrics as BenchmarkEncoderHeap. Run
// with -benchtime=1x.
func BenchmarkDecoderHeap(b *testing.B) {
	d := goldenDocs()["v1-group-chat.json"]
	d.History = nil
	for _, n := range []int{10000, 100000} {
		path := filepath.Join(b.TempDir(), "doc.json")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		size, _, err := NewEncoder(f).Encode(d, poolHistory(n))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("Decode/%d", n), func(b *testing.B) {
			var peak, alloc uint64
			for b.Loop() {
				peak, alloc = peakHeap(func() {
					doc, err := os.ReadFile(path)
					if err != nil {
						b.Fatal(err)
					}
					if _, _, err := Decode(doc); err != nil {
						b.Fatal(err)
					}
				})
			}
			reportHeap(b, n, peak, alloc)
		})
		b.Run(fmt.Sprintf("Decoder/%d", n), func(b *testing.B) {
			var peak, alloc uint64
			for b.Loop() {
				peak, alloc = peakHeap(func() {
					dec := NewDecoder(f, size)
					if _, _, err := dec.Header(); err != nil {
						b.Fatal(err)
					}
					if err := dec.History()(func(chat.Message) error { return nil }); err != nil {
						b.Fatal(err)
					}
					if !dec.streamed {
						b.Fatal("not streamed")
					}
				})
			}
			reportHeap(b, n, peak, alloc)
		})
		f.Close()
	}
}
