package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

// Groups are the --rows names, in the order Run measures them. Memory comes first: in
// a process that has run other rows, the new chats fill the free slots their garbage
// left and earlier chats leave the worker's cache, so the heap grows less than the
// chats take (a full run measured 27.9 KB per idle chat where the row alone measures
// 44 KB, and a negative heap for active chats).
var Groups = []string{"memory", "turn", "throughput", "start", "group", "transfer", "long"}

// Config says what Run measures.
type Config struct {
	// Short runs a few iterations of every row: it checks that each runs and prints,
	// not its timings (no row passes or fails).
	Short bool
	// LongMessages, when positive, is the length of the long row's chat (default
	// 1,000,000; 2,000 with Short); its tenth is its floor's.
	LongMessages int
	// Rows is a subset of Groups; empty means all.
	Rows []string
	// ProfileDir, if set, receives CPU and heap profiles of this process during the
	// throughput run (throughput-cpu-agentchat.pprof, throughput-heap-agentchat.pprof
	// and the floor's) and the export and import rounds (transfer-*.pprof).
	ProfileDir string
	// Progress receives a line as each measurement starts and ends; nil discards.
	Progress io.Writer
	// Server describes the Temporal server for the table's notes; "" says nothing.
	Server string
}

// sizes are the iteration counts of a run.
type sizes struct {
	// turn: sequential turns on one chat after warmup turns, user texts of TextBytes.
	Warmup, Turns, TextBytes int
	// throughput: Chats driven at once, ChatTurns turns each, in LoadRounds rounds
	// that alternate with the floor's.
	Chats, ChatTurns, LoadRounds int
	// start: chats started with their first turn, one after another.
	Starts int
	// group: three-agent turns after GroupWarmup.
	GroupWarmup, GroupTurns int
	// transfer: messages of the exported and imported chat; export+import rounds.
	Messages, TransferRounds int
	// memory: chats opened; of those, ActiveChats sending turns for ActiveFor.
	IdleChats, ActiveChats int
	ActiveFor              time.Duration
	// long: messages of the long chat, and turns on it and on a 100-message chat.
	LongMessages, LongTurns int
	// Width is how many calls set-up steps (opening chats) make at once.
	Width int
}

func sizesFor(short bool) sizes {
	if short {
		// TextBytes is large so that the short run's few turns pass the 16 KiB past
		// which a model call reads the history by query (both turn rows get samples).
		return sizes{Warmup: 2, Turns: 10, TextBytes: 2000, Chats: 4, ChatTurns: 3, LoadRounds: 2, Starts: 3,
			GroupWarmup: 1, GroupTurns: 3, Messages: 500, TransferRounds: 1,
			IdleChats: 20, ActiveChats: 5, ActiveFor: time.Second, Width: 10, LongMessages: 2000, LongTurns: 3}
	}
	return sizes{Warmup: 10, Turns: 200, TextBytes: 120, Chats: 100, ChatTurns: 20, LoadRounds: 4, Starts: 100,
		GroupWarmup: 3, GroupTurns: 50, Messages: 10_000, TransferRounds: 5,
		IdleChats: 1000, ActiveChats: 100, ActiveFor: 5 * time.Second, Width: 50, LongMessages: 1_000_000, LongTurns: 50}
}

// runner carries a run's world, sizes and table to the measurements.
type runner struct {
	e   *Env
	sz  sizes
	cfg Config
	t   *Table
}

func (r *runner) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "bench: "+format+"\n", args...)
	}
}

// Run measures the selected rows on e and returns the table. Every goroutine it starts
// carries the pprof label role=driver. It stops at the first measurement that fails.
func Run(ctx context.Context, e *Env, cfg Config) (*Table, error) {
	groups, err := selectGroups(cfg.Rows)
	if err != nil {
		return nil, err
	}
	sz := sizesFor(cfg.Short)
	if cfg.LongMessages > 0 {
		sz.LongMessages = cfg.LongMessages
	}
	r := &runner{e: e, sz: sz, cfg: cfg, t: &Table{Short: cfg.Short}}
	r.header()
	measure := map[string]func(context.Context) error{
		"turn": r.turn, "throughput": r.throughput, "start": r.start, "group": r.group,
		"transfer": r.transfer, "memory": r.memory, "long": r.long,
	}
	pprof.Do(ctx, pprof.Labels(roleLabel, roleDriver), func(ctx context.Context) {
		for _, g := range groups {
			start := time.Now()
			r.progress("%s ...", g)
			if err = measure[g](ctx); err != nil {
				err = fmt.Errorf("bench: %s: %w", g, err)
				return
			}
			r.progress("%s done in %s", g, time.Since(start).Round(100*time.Millisecond))
		}
	})
	if load, ok := loadAverage(); ok {
		r.t.Note("load average (1 min) at the end: %.2f", load)
	}
	return r.t, err
}

// selectGroups checks rows against Groups and returns them in Groups' order.
func selectGroups(rows []string) ([]string, error) {
	if len(rows) == 0 {
		return Groups, nil
	}
	for _, g := range rows {
		if !slices.Contains(Groups, g) {
			return nil, fmt.Errorf("bench: unknown row group %q; known: %s", g, strings.Join(Groups, ", "))
		}
	}
	var out []string
	for _, g := range Groups {
		if slices.Contains(rows, g) {
			out = append(out, g)
		}
	}
	return out, nil
}

// header notes what is measured where, and how busy the machine was at the start.
func (r *runner) header() {
	mode := "full"
	if r.cfg.Short {
		mode = "short (checks that every row runs; timings are not judged)"
	}
	r.t.Note("mode: %s; %d CPUs, GOMAXPROCS %d, %s", mode, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	r.t.Note("floor: workflow %s, update %q running one no-op regular activity on its own task queue; "+
		"both workers in this process with default worker.Options; offline model with zero latency", FloorWorkflowType, FloorActivityUpdate)
	if r.cfg.Server != "" {
		r.t.Note("server: %s", r.cfg.Server)
	}
	if load, ok := loadAverage(); ok {
		r.t.Note("load average (1 min) at the start: %.2f (other processes on this machine distort every figure)", load)
	}
}
