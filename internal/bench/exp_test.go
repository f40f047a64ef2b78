package bench

// TEMPORARY experiments; deleted before handing back.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

func expSizes() sizes {
	s := sizesFor(false)
	s.Turns, s.Chats, s.ChatTurns = 60, 100, 10
	return s
}

func runVariant(t *testing.T, name string, opts EnvOptions, groups ...string) {
	ctx := context.Background()
	opts.Address = testenv.Address(t)
	opts.KeepWorkflows = true
	e, err := NewEnv(ctx, opts)
	require.NoError(t, err)
	defer e.Close()
	r := &runner{e: e, sz: expSizes(), t: &Table{}}
	m := map[string]func(context.Context) error{"turn": r.turn, "throughput": r.throughput, "start": r.start, "group": r.group}
	for _, g := range groups {
		require.NoError(t, m[g](ctx))
	}
	var b strings.Builder
	r.t.WriteText(&b)
	fmt.Fprintf(os.Stderr, "==== %s\n%s\n", name, b.String())
}

func TestExpVariants(t *testing.T) {
	if os.Getenv("BENCH_EXP") == "" {
		t.Skip()
	}
	groups := strings.Split(os.Getenv("BENCH_GROUPS"), ",")
	noStream := strings.ReplaceAll(AgentConfig, "agents:", "endpoints:\n  default: {baseURL: \"http://unused/v1\", stream: false}\nagents:")
	noGzip := func(o *client.Options) { o.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{} }
	for _, v := range strings.Split(os.Getenv("BENCH_EXP"), ",") {
		switch v {
		case "base":
			runVariant(t, v, EnvOptions{}, groups...)
		case "nostream":
			runVariant(t, v, EnvOptions{AgentConfig: noStream}, groups...)
		case "nogzip":
			runVariant(t, v, EnvOptions{ClientOptions: noGzip}, groups...)
		case "both":
			runVariant(t, v, EnvOptions{AgentConfig: noStream, ClientOptions: noGzip}, groups...)
		case "pollers":
			runVariant(t, v, EnvOptions{WorkerOptions: worker.Options{MaxConcurrentWorkflowTaskPollers: 8, MaxConcurrentActivityTaskPollers: 8}}, groups...)
		case "noeager":
			runVariant(t, v, EnvOptions{WorkerOptions: worker.Options{DisableEagerActivities: true}}, groups...)
		}
	}
}

// The floor with an activity that takes d.
func TestExpSleepyFloor(t *testing.T) {
	if os.Getenv("BENCH_SLEEPY") == "" {
		t.Skip()
	}
	ctx := context.Background()
	e, err := NewEnv(ctx, EnvOptions{Address: testenv.Address(t), KeepWorkflows: true})
	require.NoError(t, err)
	defer e.Close()
	type variant struct {
		d  time.Duration
		hb bool
		wo worker.Options
	}
	for _, v := range []variant{{0, false, worker.Options{}}, {10 * time.Millisecond, false, worker.Options{}}, {20 * time.Millisecond, false, worker.Options{}},
		{40 * time.Millisecond, false, worker.Options{}}, {80 * time.Millisecond, false, worker.Options{}}} {
		d := v.d
		tq := "sleepy-" + newChatID("x")
		w := worker.New(e.workerTC, tq, v.wo)
		w.RegisterWorkflowWithOptions(Floor, workflow.RegisterOptions{Name: FloorWorkflowType})
		w.RegisterActivityWithOptions(func(ctx context.Context, in NoopInput) (NoopResult, error) {
			if v.hb {
				activity.RecordHeartbeat(ctx)
			}
			time.Sleep(d)
			return NoopResult(in), nil
		}, activity.RegisterOptions{Name: FloorNoopActivity})
		require.NoError(t, w.Start())
		id := newChatID("sleepy")
		_, err := e.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: tq}, FloorWorkflowType)
		require.NoError(t, err)
		ds, err := timeEach(ctx, 10, 100, func(ctx context.Context, i int) error {
			return e.floorTurn(ctx, id, FloorActivityUpdate, FloorTurn{Text: "x"})
		})
		require.NoError(t, err)
		ph, err := e.phases(ctx, id, 10)
		require.NoError(t, err)
		fmt.Fprintf(os.Stderr, "  phases: accept %.1f activity %.1f reply %.1f\n", median(ph.accept), median(ph.activity), median(ph.reply))
		fmt.Fprintf(os.Stderr, "sleep %v hb %v noeager %v pollers %d: p10 %.1f p50 %.1f p90 %.1f p99 %.1f\n", d, v.hb, v.wo.DisableEagerActivities, v.wo.MaxConcurrentWorkflowTaskPollers, percentile(ds, 10), median(ds), percentile(ds, 90), percentile(ds, 99))
		w.Stop()
	}
}

func TestExpHistory(t *testing.T) {
	if os.Getenv("BENCH_HIST") == "" {
		t.Skip()
	}
	ctx := context.Background()
	e, err := NewEnv(ctx, EnvOptions{Address: testenv.Address(t), KeepWorkflows: true})
	require.NoError(t, err)
	defer e.Close()
	dump := func(id string, from int64) {
		it := e.Temporal.GetWorkflowHistory(ctx, id, "", false, 0)
		var prev time.Time
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			if ev.GetEventId() < from {
				prev = ev.GetEventTime().AsTime()
				continue
			}
			tm := ev.GetEventTime().AsTime()
			extra := ""
			if a := ev.GetWorkflowTaskScheduledEventAttributes(); a != nil {
				extra = a.GetTaskQueue().GetKind().String() + " " + a.GetTaskQueue().GetName()
			}
			if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
				extra = a.GetIdentity()
			}
			fmt.Fprintf(os.Stderr, "%4d %-45s +%6.1fms %s\n", ev.GetEventId(), ev.GetEventType(), ms(tm.Sub(prev)), extra)
			prev = tm
		}
	}
	fid, err := e.startFloor(ctx, "hist")
	require.NoError(t, err)
	var ds []time.Duration
	for i := range 30 {
		start := time.Now()
		require.NoError(t, e.floorTurn(ctx, fid, FloorActivityUpdate, FloorTurn{Text: "x"}))
		ds = append(ds, time.Since(start))
		_ = i
	}
	fmt.Fprintf(os.Stderr, "floor last turns: %v\n", ds[25:])
	dump(fid, 1)
	id, err := e.startChat(ctx, "hist", "helper")
	require.NoError(t, err)
	ds = nil
	for i := range 30 {
		start := time.Now()
		_, err := e.send(ctx, id, agentchatInput(i), 1)
		require.NoError(t, err)
		ds = append(ds, time.Since(start))
	}
	fmt.Fprintf(os.Stderr, "chat last turns: %v\n", ds[25:])
	dump(id, 1)
}

func agentchatInput(i int) agentchat.SendMessageInput {
	return agentchat.SendMessageInput{Text: userText(i, 120)}
}
