package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/agentchat/agentchat"
)

// load is what one throughput run did: turns, wall time, and CPU time of this process
// and of the server (NaN when unknown).
type load struct {
	turns             int
	elapsed           time.Duration
	selfCPU, serverCP float64 // milliseconds
}

func (l load) perSecond() float64 { return float64(l.turns) / l.elapsed.Seconds() }

// add sums two loads.
func (l load) add(o load) load {
	return load{turns: l.turns + o.turns, elapsed: l.elapsed + o.elapsed, selfCPU: l.selfCPU + o.selfCPU, serverCP: l.serverCP + o.serverCP}
}

// throughput drives Chats chats at once, ChatTurns turns each, against floor workflows
// driven the same way, and reports turns per second and CPU per turn. The turns go
// in LoadRounds rounds, agentchat's and the floor's alternating (and which goes first
// with them), so that a machine that slows down or speeds up during the row weighs
// on both alike: one after the other, the ratio swung by ±0.1 between runs of the
// same code.
func (r *runner) throughput(ctx context.Context) error {
	e, sz := r.e, r.sz
	chats := make([]string, sz.Chats)
	floors := make([]string, sz.Chats)
	if err := parallel(ctx, sz.Chats, sz.Width, func(ctx context.Context, i int) (err error) {
		if chats[i], err = e.startChat(ctx, "load", "helper"); err != nil {
			return err
		}
		floors[i], err = e.startFloor(ctx, "load")
		return err
	}); err != nil {
		return err
	}
	chatTurn := func(ctx context.Context, i, j int) error {
		_, err := e.send(ctx, chats[i], agentchat.SendMessageInput{Text: userText(j, sz.TextBytes)}, 1)
		return err
	}
	floorTurn := func(ctx context.Context, i, j int) error {
		return e.floorTurn(ctx, floors[i], FloorActivityUpdate, FloorTurn{Text: userText(j, sz.TextBytes)})
	}
	var chat, floor load
	rounds := max(min(sz.LoadRounds, sz.ChatTurns), 1)
	for k := range rounds {
		from, to := k*sz.ChatTurns/rounds, (k+1)*sz.ChatTurns/rounds
		sides := []func() error{
			func() error {
				l, err := r.drive(ctx, "agentchat", k == 0, from, to, chatTurn)
				chat = chat.add(l)
				return err
			},
			func() error {
				l, err := r.drive(ctx, "floor", k == 0, from, to, floorTurn)
				floor = floor.add(l)
				return err
			},
		}
		if k%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			if err := side(); err != nil {
				return err
			}
		}
	}
	per := func(cpu float64, l load) float64 { return cpu / float64(l.turns) }
	name := fmt.Sprintf("Throughput, %d chats x %d turns (turns/s)", sz.Chats, sz.ChatTurns)
	r.t.Add(
		Row{Group: "throughput", Name: name, Value: chat.perSecond(), Floor: floor.perSecond(), Target: AtLeast(0.9)},
		Row{Group: "throughput", Name: "Throughput, CPU of this process per turn (ms)", Value: per(chat.selfCPU, chat), Floor: per(floor.selfCPU, floor)},
		Row{Group: "throughput", Name: "Throughput, CPU of the server per turn (ms)", Value: per(chat.serverCP, chat), Floor: per(floor.serverCP, floor)},
	)
	r.t.Note("throughput: %d turns in %s (agentchat), %s (floor), in %d rounds each, alternating; this process holds both workers, the drivers and the offline model; profiles are of the first round",
		chat.turns, chat.elapsed.Round(time.Millisecond), floor.elapsed.Round(time.Millisecond), rounds)
	if e.ServerPID == 0 {
		r.t.Note("throughput: the server's CPU is measured only for a dev server on this machine")
	}
	return nil
}

// drive runs turn(i, j) for chat i < Chats and turn from <= j < to, the chats at once
// and each chat's turns in sequence, with a CPU profile when asked for and profile is
// set.
func (r *runner) drive(ctx context.Context, who string, profile bool, from, to int, turn func(ctx context.Context, i, j int) error) (load, error) {
	sz := r.sz
	stop := func() error { return nil }
	if profile {
		var err error
		if stop, err = r.startProfile("throughput", who); err != nil {
			return load{}, err
		}
	}
	self0, selfOK := processCPU()
	server0, serverOK := pidCPU(r.e.ServerPID)
	start := time.Now()
	err := parallel(ctx, sz.Chats, sz.Chats, func(ctx context.Context, i int) error {
		for j := from; j < to; j++ {
			if err := turn(ctx, i, j); err != nil {
				return err
			}
		}
		return nil
	})
	l := load{turns: sz.Chats * (to - from), elapsed: time.Since(start), selfCPU: math.NaN(), serverCP: math.NaN()}
	if self1, ok := processCPU(); ok && selfOK {
		l.selfCPU = ms(self1 - self0)
	}
	if server1, ok := pidCPU(r.e.ServerPID); ok && serverOK {
		l.serverCP = ms(server1 - server0)
	}
	if perr := stop(); err == nil {
		err = perr
	}
	return l, err
}

// startProfile starts a CPU profile of this process into ProfileDir (if set), named by
// the measurement and whose run it is, and returns the function that stops it and
// writes a heap profile beside it. The memory row samples the heap every
// memProfileRate bytes while it runs.
func (r *runner) startProfile(what, who string) (stop func() error, err error) {
	dir := r.cfg.ProfileDir
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cpuPath := filepath.Join(dir, what+"-cpu-"+who+".pprof")
	f, err := os.Create(cpuPath)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	rate := runtime.MemProfileRate
	if what == "memory" {
		runtime.MemProfileRate = memProfileRate
	}
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			err = r.stopProfile(f, cpuPath, dir, what, who)
			runtime.MemProfileRate = rate
		})
		return err
	}, nil
}

// stopProfile stops the CPU profile written to f and writes a heap profile beside it.
func (r *runner) stopProfile(f *os.File, cpuPath, dir, what, who string) error {
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		return err
	}
	heapPath := filepath.Join(dir, what+"-heap-"+who+".pprof")
	h, err := os.Create(heapPath)
	if err != nil {
		return err
	}
	runtime.GC() // the heap profile shows live objects as of the last GC
	if err := pprof.Lookup("heap").WriteTo(h, 0); err != nil {
		_ = h.Close()
		return err
	}
	if err := h.Close(); err != nil {
		return err
	}
	r.t.Note("profiles (%s, %s): %s, %s; the worker alone: go tool pprof -top -tagignore role=driver,model %s",
		what, who, cpuPath, heapPath, cpuPath)
	return nil
}
