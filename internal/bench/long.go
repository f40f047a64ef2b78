package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/idspill"
)

// long measures a chat of LongMessages messages against one of 100 (docs/design/
// paged-history.md): both are imported (the long one's older messages go to pages
// of the worker's message store), then take turns interleaved; a long chat's turn
// must stay within 1.2x a short one's. It also times the long import and samples
// this process's peak heap (worker and client) while it runs, against the import of a
// tenth of it: a flat heap would not grow with the document.
func (r *runner) long(ctx context.Context) error {
	sz := r.sz
	shortID, longID := newChatID("long-100"), newChatID("long")
	if _, _, _, err := r.importHistory(ctx, shortID, 100); err != nil {
		return err
	}
	tenthID := newChatID("long-tenth")
	tenthTook, tenthPeak, tenthKept, err := r.importHistory(ctx, tenthID, sz.LongMessages/10)
	if err != nil {
		return err
	}
	stop, err := r.startProfile("long-import", "agentchat")
	if err != nil {
		return err
	}
	took, peak, kept, err := r.importHistory(ctx, longID, sz.LongMessages)
	if perr := stop(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	tenthExportTook, tenthExportPeak, err := r.exportHistory(ctx, tenthID, sz.LongMessages/10)
	if err != nil {
		return err
	}
	exportTook, exportPeak, err := r.exportHistory(ctx, longID, sz.LongMessages)
	if err != nil {
		return err
	}
	turn := func(id string) func(context.Context, int) error {
		return func(ctx context.Context, i int) error {
			_, err := r.e.send(ctx, id, agentchat.SendMessageInput{MessageID: uuid.NewString(), Text: userText(i, sz.TextBytes)}, 1)
			return err
		}
	}
	times, err := timeRounds(ctx, sz.Warmup, sz.LongTurns, turn(longID), turn(shortID))
	if err != nil {
		return err
	}
	const mb = 1 << 20
	name, tenth := itoa(sz.LongMessages), itoa(sz.LongMessages/10)
	r.t.Add(
		Row{Group: "long", Name: "Turn p50, " + name + "-message chat vs 100 (ms)", Value: median(times[0]), Floor: median(times[1]), Target: AtMost(1.2)},
		Row{Group: "long", Name: "Import, " + name + " vs " + tenth + " messages (s)", Value: took.Seconds(), Floor: tenthTook.Seconds()},
		Row{Group: "long", Name: "Peak heap, import of " + name + " vs " + itoa(sz.LongMessages/10) + " messages (MB)",
			Value: float64(peak) / mb, Floor: float64(tenthPeak) / mb},
		Row{Group: "long", Name: "Heap kept for the idle chat after its import, " + name + " vs " + tenth + " messages (KB)",
			Value: float64(kept) / 1024, Floor: float64(tenthKept) / 1024, Target: AtMost(1.2)},
		Row{Group: "long", Name: "Export, " + name + " vs " + tenth + " messages (s)", Value: exportTook.Seconds(), Floor: tenthExportTook.Seconds()},
		Row{Group: "long", Name: "Peak heap, export of " + name + " vs " + itoa(sz.LongMessages/10) + " messages (MB)",
			Value: float64(exportPeak) / mb, Floor: float64(tenthExportPeak) / mb},
	)
	r.t.Note("long: chats imported from documents of %s, %s and 100 messages (texts of 100 to 1,000 bytes), then %d turns on the long and the 100-message chat, interleaved, after %d warm-up turns; "+
		"then both imported chats exported to a file on the worker (Client.ExportTo, sink file); "+
		"peak heap = the highest HeapInuse of this process (worker, client, model), sampled every 10 ms during Client.Import or Client.ExportTo, over its value before; "+
		"heap kept = live heap after a GC once the import returned, over its value before: the worker's cached chat (window and index) and what else stays",
		name, itoa(sz.LongMessages/10), sz.LongTurns, sz.Warmup)
	return nil
}

// importHistory imports a helper thread of n messages (History) into chat id by file
// and returns how long Client.Import took, the peak heap it added, and the heap still
// live after it (after a GC): what the worker keeps of the idle chat (its cached
// workflow, with the window and the index) and what else stays.
func (r *runner) importHistory(ctx context.Context, id string, n int) (took time.Duration, peak, kept uint64, err error) {
	r.e.track(id)
	path := filepath.Join(r.e.dir, id+".json")
	if err := writeDocument(path, n); err != nil {
		return 0, 0, 0, err
	}
	defer os.Remove(path)
	before := liveHeap()
	var st agentchat.StateResult
	took, peak, err = measureHeap(func() error {
		var err error
		st, err = r.e.Chats.Import(ctx, agentchat.ImportOptions{ChatID: id, Path: path})
		return err
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("import %d messages: %w", n, err)
	}
	if st.MessageCount != n {
		return 0, 0, 0, fmt.Errorf("imported chat %s has %d messages, want %d", id, st.MessageCount, n)
	}
	return took, peak, uint64(max(float64(liveHeap())-float64(before), 0)), nil
}

// liveHeap is the bytes of live heap objects after a GC.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// writeDocument writes the document of a helper thread of n messages (History) to path,
// a message at a time (chatstate.Encoder).
func writeDocument(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, _, err := chatstate.NewEncoder(f).SpillIDs(idspill.Opener("")).Encode(Document(nil), historyOf(n)); err != nil {
		f.Close()
		return fmt.Errorf("encode a document of %d messages: %w", n, err)
	}
	return f.Close()
}

// exportHistory exports chat id, of n messages, to a file and returns how long
// Client.ExportTo took and the peak heap it added.
func (r *runner) exportHistory(ctx context.Context, id string, n int) (time.Duration, uint64, error) {
	path := filepath.Join(r.e.dir, id+"-export.json")
	defer os.Remove(path)
	var res agentchat.ExportResult
	took, peak, err := measureHeap(func() error {
		var err error
		res, err = r.e.Chats.ExportTo(ctx, id, agentchat.ExportInput{Sink: "file", Path: path})
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("export %d messages: %w", n, err)
	}
	if res.MessageCount != n {
		return 0, 0, fmt.Errorf("exported chat %s has %d messages, want %d", id, res.MessageCount, n)
	}
	return took, peak, nil
}

// measureHeap runs f and returns how long it took and the highest HeapInuse of this
// process while it ran (sampled every 10 ms) over its value before.
func measureHeap(f func() error) (time.Duration, uint64, error) {
	runtime.GC()
	before := sampleMemory().heap
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	start := time.Now()
	err := f()
	took := time.Since(start)
	close(done)
	wg.Wait()
	return took, uint64(max(float64(peak.Load())-before, 0)), err
}
