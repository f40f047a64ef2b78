package bench

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/agentchat/agentchat"
)

// memorySamples is how many heap samples are taken while chats are active.
const memorySamples = 5

// memSample is what the process holds after a full collection, in bytes: the heap
// in use, and the goroutine stacks (each cached workflow keeps its coroutines).
type memSample struct {
	heap, live, stacks float64
}

func sampleMemory() memSample {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memSample{heap: float64(m.HeapInuse), live: float64(m.HeapAlloc), stacks: float64(m.StackInuse)}
}

// footprint is what opening and then driving chats added, in bytes: heap and stacks
// once idle, heap while some were active.
type footprint struct {
	idle, idleLive, idleStacks, active float64
}

// memory measures the heap this process holds for IdleChats open chats (each started
// with one turn, then idle: the worker keeps them in its sticky cache), then while
// ActiveChats of them send turns, against floor workflows treated the same way.
//
// Before either is measured, Width workflows of each kind are opened and left open, so
// that what the process sets up once (the SDK's protobuf message tables, the JSON
// codecs' caches, the workers' pools) is counted for neither: otherwise it would all be
// charged to whichever kind is measured first.
func (r *runner) memory(ctx context.Context) error {
	e, sz := r.e, r.sz
	openChat := func(ctx context.Context, i int) (string, error) {
		return e.startChatWithTurn(ctx, "idle", userText(i, sz.TextBytes))
	}
	openFloor := func(ctx context.Context, i int) (string, error) {
		return e.startFloorWithTurn(ctx, "idle", userText(i, sz.TextBytes))
	}
	for _, open := range []func(context.Context, int) (string, error){openChat, openFloor} {
		if err := parallel(ctx, sz.Width, sz.Width, func(ctx context.Context, i int) error {
			_, err := open(ctx, i)
			return err
		}); err != nil {
			return err
		}
	}
	chat, err := r.footprint(ctx, "agentchat", openChat,
		func(ctx context.Context, id string, j int) error {
			_, err := e.send(ctx, id, agentchat.SendMessageInput{Text: userText(j, sz.TextBytes)}, 1)
			return err
		})
	if err != nil {
		return err
	}
	floor, err := r.footprint(ctx, "floor", openFloor,
		func(ctx context.Context, id string, j int) error {
			return e.floorTurn(ctx, id, FloorActivityUpdate, FloorTurn{Text: userText(j, sz.TextBytes)})
		})
	if err != nil {
		return err
	}
	const mb, kb = 1 << 20, 1 << 10
	idle, active := float64(sz.IdleChats), float64(sz.ActiveChats)
	r.t.Add(
		Row{Group: "memory", Name: "Heap, " + itoa(sz.IdleChats) + " idle chats (MB)", Value: chat.idle / mb, Floor: floor.idle / mb},
		Row{Group: "memory", Name: "Heap per idle chat (KB)", Value: chat.idle / idle / kb, Floor: floor.idle / idle / kb, Target: AtMost(1.5)},
		Row{Group: "memory", Name: "Live heap objects per idle chat (KB)", Value: chat.idleLive / idle / kb, Floor: floor.idleLive / idle / kb},
		Row{Group: "memory", Name: "Goroutine stacks per idle chat (KB)", Value: chat.idleStacks / idle / kb, Floor: floor.idleStacks / idle / kb},
		Row{Group: "memory", Name: "Heap, " + itoa(sz.IdleChats) + " chats, " + itoa(sz.ActiveChats) + " active (MB)",
			Value: chat.active / mb, Floor: floor.active / mb},
		Row{Group: "memory", Name: "Heap added per active chat (KB)",
			Value: (chat.active - chat.idle) / active / kb, Floor: (floor.active - floor.idle) / active / kb},
	)
	r.t.Note("memory: HeapInuse (and StackInuse) after runtime.GC of this process (both workers, drivers, model) over its value before the chats were opened (after %d of each kind were opened to warm the process up); "+
		"active = mean of %d samples while %d chats send turns for %s", sz.Width, memorySamples, sz.ActiveChats, sz.ActiveFor)
	return nil
}

// footprint opens IdleChats workflows with open (each started with its first turn,
// Width at a time), measures the heap they add once idle, then drives ActiveChats of
// them with turn for ActiveFor and samples the heap meanwhile. With ProfileDir set, it
// writes the CPU profile of the opening and the heap profile of the idle workflows
// (memory-cpu-<who>.pprof, memory-heap-<who>.pprof).
func (r *runner) footprint(ctx context.Context, who string, open func(context.Context, int) (string, error),
	turn func(context.Context, string, int) error) (footprint, error) {
	sz := r.sz
	before := sampleMemory()
	stopProfile, err := r.startProfile("memory", who)
	if err != nil {
		return footprint{}, err
	}
	ids := make([]string, sz.IdleChats)
	if err := parallel(ctx, sz.IdleChats, sz.Width, func(ctx context.Context, i int) (err error) {
		ids[i], err = open(ctx, i)
		return err
	}); err != nil {
		return footprint{}, err
	}
	time.Sleep(time.Second) // let the last workflow tasks and activities finish
	idle := sampleMemory()
	fp := footprint{idle: idle.heap - before.heap, idleLive: idle.live - before.live, idleStacks: idle.stacks - before.stacks}
	if err := stopProfile(); err != nil {
		return footprint{}, err
	}

	// Each active chat sends turns, one after another, until ActiveFor has passed; a
	// turn under way then finishes.
	until := time.Now().Add(sz.ActiveFor)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		turnEr error
	)
	for i := range sz.ActiveChats {
		wg.Go(func() {
			for j := 1; time.Now().Before(until); j++ {
				if err := turn(ctx, ids[i], j); err != nil {
					mu.Lock()
					turnEr = err
					mu.Unlock()
					return
				}
			}
		})
	}
	var sum float64
	every := sz.ActiveFor / (memorySamples + 1)
	for range memorySamples {
		time.Sleep(every)
		sum += sampleMemory().heap - before.heap
	}
	wg.Wait()
	fp.active = sum / memorySamples
	return fp, turnEr
}

// itoa formats n with thousands separators: 1000 → "1,000".
func itoa(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
