package integration_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// The streaming benchmarks (README, "Performance"): go test -run='^$' -bench=Stream
// -benchtime=20x ./integration. Each sub-benchmark runs its turns b.N times.

// benchChunkDelay paces the offline model's chunks: a word every 20 ms, as a fast
// real model writes.
const benchChunkDelay = 20 * time.Millisecond

// benchText is the scripted reply: 40 words.
var benchText = strings.TrimSpace(strings.Repeat("lorem ipsum dolor sit amet ", 8))

// streamConfig has one agent streamed to the chat (the default publishInterval) and
// one whose deltas are not published (publishInterval -1): the same model, the same
// reply.
const streamConfig = `
agents:
  - {id: helper, name: Helper, model: offline}
  - {id: quiet, name: Quiet, model: offline, publishInterval: -1}
  - {id: i100, name: I100, model: offline, publishInterval: 100ms}
  - {id: i250, name: I250, model: offline, publishInterval: 250ms}
`

// benchAgents are the streamed agents, by publish interval: the default (50 ms), 100
// and 250 ms.
var benchAgents = []string{"helper", "i100", "i250"}

type agentTransport struct{ agent string }

func (a agentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(wire.AgentHeader, a.agent)
	return http.DefaultTransport.RoundTrip(r)
}

// chunkTimes streams the reply straight from the offline model: the cumulative text
// length at each chunk and when it came, from the request's start.
func chunkTimes(b *testing.B, model *offline.Server, agent string) (lens []int, at []time.Duration) {
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = model.URL()
	cfg.HTTPClient = &http.Client{Transport: agentTransport{agent: agent}}
	c := openai.NewClientWithConfig(cfg)
	start := time.Now()
	stream, err := c.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{Model: offline.ModelID, Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}})
	require.NoError(b, err)
	defer stream.Close()
	n := 0
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return lens, at
		}
		require.NoError(b, err)
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			n += len(chunk.Choices[0].Delta.Content)
			lens, at = append(lens, n), append(at, time.Since(start))
		}
	}
}

// activityStarted returns when the chat's last InvokeAgent attempt started, by the
// server's clock (the same machine's).
func activityStarted(b *testing.B, h *testenv.Harness, id string) time.Time {
	it := h.Temporal.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var started time.Time
	scheduled := map[int64]bool{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(b, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == wire.InvokeAgentActivity {
			scheduled[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			started = ev.GetEventTime().AsTime()
		}
	}
	return started
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkStream measures streaming against the same offline model streamed straight
// to a caller, side by side in one run.
func BenchmarkStream(b *testing.B) {
	h := testenv.New(b, testenv.Options{Config: streamConfig, Model: offline.Options{ChunkDelay: benchChunkDelay,
		Scripts: map[string][]offline.Reply{"helper": {{Text: benchText}}, "quiet": {{Text: benchText}},
			"i100": {{Text: benchText}}, "i250": {{Text: benchText}}}}})
	for _, agent := range benchAgents {
		b.Run("latency/"+agent, func(b *testing.B) { benchLatency(b, h, agent) })
	}
	for _, agent := range benchAgents {
		b.Run("history/"+agent, func(b *testing.B) { benchHistory(b, h, agent, true) })
	}
	b.Run("history/unfollowed", func(b *testing.B) { benchHistory(b, h, "helper", false) })
	b.Run("throughput", func(b *testing.B) { benchThroughput(b, h) })
}

// benchLatency: when a chunk reaches a SendStream subscriber, less when the model wrote
// it (the activity's start plus the chunk's time in a direct stream).
func benchLatency(b *testing.B, h *testenv.Harness, agent string) {
	ctx := context.Background()
	{
		lens, direct := chunkTimes(b, h.Model, agent)
		var added []time.Duration
		n := 0
		for b.Loop() {
			n++
			id := fmt.Sprintf("%s-%d", testenv.ChatID(b), n)
			_, err := h.Client.Start(ctx, agentchat.StartOptions{ChatID: id, Participants: []string{agent}})
			require.NoError(b, err)
			var arrivals []time.Time
			var sums []int
			sum := 0
			for ev, err := range h.Client.SendStream(ctx, id, agentchat.SendMessageInput{MessageID: "t1", Text: "hi"}) {
				require.NoError(b, err)
				if ev.Type == wire.EventTextDelta {
					sum += len(ev.Text)
					sums, arrivals = append(sums, sum), append(arrivals, time.Now())
				}
			}
			t0 := activityStarted(b, h, id)
			for i, l := range lens {
				j, _ := slices.BinarySearch(sums, l)
				require.Less(b, j, len(sums))
				added = append(added, arrivals[j].Sub(t0)-direct[i])
			}
		}
		b.ReportMetric(float64(percentile(added, 0.5).Microseconds())/1000, "p50-added-ms")
		b.ReportMetric(float64(percentile(added, 0.99).Microseconds())/1000, "p99-added-ms")
		b.ReportMetric(float64(direct[len(direct)-1].Microseconds())/1000, "direct-stream-ms")
	}
}

// benchHistory: history per turn, a chat of a streamed agent against one whose deltas
// are not published, each answering b.N turns; the streamed chat's turns are followed
// by a subscriber (SendStream), or, with follow false, by no one (Send).
func benchHistory(b *testing.B, h *testenv.Harness, agent string, follow bool) {
	ctx := context.Background()
	{
		on, off := testenv.ChatID(b)+"-on", testenv.ChatID(b)+"-off"
		for _, c := range []struct{ id, agent string }{{on, agent}, {off, "quiet"}} {
			_, err := h.Client.Start(ctx, agentchat.StartOptions{ChatID: c.id, Participants: []string{c.agent}})
			require.NoError(b, err)
		}
		before := map[string][2]int64{}
		for _, id := range []string{on, off} {
			before[id] = historySize(b, h, id)
		}
		n := 0
		for b.Loop() {
			n++
			msg := agentchat.SendMessageInput{MessageID: fmt.Sprintf("t%d", n), Text: "hi"}
			if follow {
				for _, err := range h.Client.SendStream(ctx, on, msg) {
					require.NoError(b, err)
				}
			} else {
				_, err := h.Client.Send(ctx, on, msg)
				require.NoError(b, err)
			}
			_, err := h.Client.Send(ctx, off, msg)
			require.NoError(b, err)
		}
		sOn, sOff := historySize(b, h, on), historySize(b, h, off)
		bytesOn, bytesOff := float64(sOn[0]-before[on][0])/float64(n), float64(sOff[0]-before[off][0])/float64(n)
		eventsOn, eventsOff := float64(sOn[1]-before[on][1])/float64(n), float64(sOff[1]-before[off][1])/float64(n)
		b.ReportMetric(bytesOn, "bytes/turn-streamed")
		b.ReportMetric(bytesOff, "bytes/turn-plain")
		b.ReportMetric(bytesOn/bytesOff, "bytes-ratio")
		b.ReportMetric(eventsOn, "events/turn-streamed")
		b.ReportMetric(eventsOff, "events/turn-plain")
	}
}

// benchThroughput: 20 chats answering turns at once, streamed to subscribers or not.
func benchThroughput(b *testing.B, h *testenv.Harness) {
	ctx := context.Background()
	{
		const chats = 20
		rate := func(agent string, stream bool, round int) float64 {
			var wg sync.WaitGroup
			start := time.Now()
			for i := range chats {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := fmt.Sprintf("%s-%s-%d-%d", testenv.ChatID(b), agent, round, i)
					_, err := h.Client.Start(ctx, agentchat.StartOptions{ChatID: id, Participants: []string{agent}})
					if err != nil {
						b.Error(err)
						return
					}
					msg := agentchat.SendMessageInput{MessageID: "t1", Text: "hi"}
					if stream {
						for _, err := range h.Client.SendStream(ctx, id, msg) {
							if err != nil {
								b.Error(err)
							}
						}
					} else if _, err := h.Client.Send(ctx, id, msg); err != nil {
						b.Error(err)
					}
				}()
			}
			wg.Wait()
			return chats / time.Since(start).Seconds()
		}
		var on, off float64
		n := 0
		for b.Loop() {
			n++
			on += rate("helper", true, n)
			off += rate("quiet", false, n)
		}
		b.ReportMetric(on/float64(n), "turns/s-streamed")
		b.ReportMetric(off/float64(n), "turns/s-plain")
	}
}

// historySize is the chat's current run's history: bytes and events.
func historySize(b *testing.B, h *testenv.Harness, id string) [2]int64 {
	d, err := h.Temporal.DescribeWorkflowExecution(context.Background(), id, "")
	require.NoError(b, err)
	i := d.GetWorkflowExecutionInfo()
	return [2]int64{i.GetHistorySizeBytes(), i.GetHistoryLength()}
}
