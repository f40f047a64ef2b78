package activities

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/wire"
)

// fakeChat answers the publisher's followers query and takes its publications; the
// publisher calls nothing else of the client. With hold set, a query waits until hold
// is closed, and cancelled says whether its context ended first.
type fakeChat struct {
	client.Client
	mu        sync.Mutex
	followed  bool
	queryErr  error
	queries   int
	texts     []string
	seqs      []int64
	hold      chan struct{}
	answered  chan struct{}
	cancelled error
}

type followersValue wire.StreamFollowers

func (v followersValue) HasValue() bool { return true }
func (v followersValue) Get(p any) error {
	*p.(*wire.StreamFollowers) = wire.StreamFollowers(v)
	return nil
}

func (f *fakeChat) QueryWorkflow(ctx context.Context, _, _, name string, _ ...any) (converter.EncodedValue, error) {
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
		}
		defer close(f.answered)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = ctx.Err()
	f.queries++
	if name != wire.StreamFollowersQuery || f.queryErr != nil {
		return nil, errors.Join(f.queryErr, errors.New("unknown query "+name))
	}
	return followersValue{Followed: f.followed}, nil
}

func (f *fakeChat) SignalWorkflow(_ context.Context, _, _, name string, arg any) error {
	in := arg.(wire.StreamPublishInput)
	var ev wire.StreamEvent
	if err := wire.DecodeStreamData(in.Items[0].Data, &ev); err != nil || name != wire.StreamPublishSignal {
		return errors.Join(err, errors.New("not a publication"))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.texts, f.seqs = append(f.texts, ev.Text), append(f.seqs, in.Sequence)
	return nil
}

func (f *fakeChat) set(followed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.followed = followed
}

func (f *fakeChat) published() ([]string, []int64, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.texts...), append([]int64(nil), f.seqs...), f.queries
}

// testInterval is the publishers' batch interval in these tests.
const testInterval = 10 * time.Millisecond

// inActivity runs f with a publisher of f's chat, inside an activity (for its logger).
func inActivity(t *testing.T, chat *fakeChat, f func(p *publisher)) {
	t.Helper()
	inActivityEvery(t, chat, testInterval, f)
}

// inActivityEvery is inActivity with batches every interval.
func inActivityEvery(t *testing.T, chat *fakeChat, interval time.Duration, f func(p *publisher)) {
	t.Helper()
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	run := func(ctx context.Context) error {
		p := &publisher{tc: chat, workflowID: "c1", runID: "r1", pid: "r1/5/1", messageID: "m1/1", attempt: 1}
		p.start(ctx, interval)
		f(p)
		p.close(ctx)
		return nil
	}
	env.RegisterActivity(run)
	_, err := env.ExecuteActivity(run)
	require.NoError(t, err)
}

// The publisher publishes only while the chat is followed: text written before holds
// back and goes in one delta once a subscriber comes, the deltas contiguous; unfollowed
// to the end, nothing goes (close included); a chat that cannot say (a worker without
// the query) is published to, as before the query; no text, no query.
func TestPublisherPublishesOnlyWhileFollowed(t *testing.T) {
	t.Run("followed mid-reply", func(t *testing.T) {
		chat := &fakeChat{}
		inActivity(t, chat, func(p *publisher) {
			p.add("Hello ")
			p.add("world")
			time.Sleep(100 * time.Millisecond)
			texts, _, queries := chat.published()
			assert.Empty(t, texts, "nobody follows: nothing published")
			assert.Equal(t, 1, queries, "asked at the first text, not every tick")
			chat.set(true)
			require.Eventually(t, func() bool { texts, _, _ := chat.published(); return len(texts) > 0 },
				2*unfollowedCheck, 5*time.Millisecond, "published within about the check interval")
			p.add("!")
		})
		texts, seqs, _ := chat.published()
		assert.Equal(t, []string{"Hello world", "!"}, texts, "the text held back in one delta, then the rest")
		assert.Equal(t, []int64{1, 2}, seqs)
	})
	t.Run("unfollowed throughout", func(t *testing.T) {
		chat := &fakeChat{}
		inActivity(t, chat, func(p *publisher) {
			p.add(strings.Repeat("a", 100))
			time.Sleep(3 * unfollowedCheck)
			p.add("b")
		})
		texts, _, queries := chat.published()
		assert.Empty(t, texts, "nothing published, close included: the chat fills the text in")
		assert.GreaterOrEqual(t, queries, 2, "asked again while unfollowed")
		assert.LessOrEqual(t, queries, 5)
	})
	t.Run("followers unknown", func(t *testing.T) {
		chat := &fakeChat{queryErr: errors.New("unknown queryType StreamFollowers")}
		inActivity(t, chat, func(p *publisher) {
			p.add("Hello")
			time.Sleep(50 * time.Millisecond)
			p.add(" world")
		})
		texts, _, _ := chat.published()
		assert.Equal(t, "Hello world", strings.Join(texts, ""))
	})
	t.Run("a reply within one interval asks nothing", func(t *testing.T) {
		chat := &fakeChat{}
		inActivityEvery(t, chat, time.Second, func(p *publisher) {
			p.add("Hello")
			time.Sleep(50 * time.Millisecond) // the first text went at once before
		})
		texts, _, queries := chat.published()
		assert.Zero(t, queries, "no followers query")
		assert.Empty(t, texts, "the chat fills the text in at the message's end")
	})
	t.Run("no text", func(t *testing.T) {
		chat := &fakeChat{}
		inActivity(t, chat, func(p *publisher) { time.Sleep(50 * time.Millisecond) })
		_, _, queries := chat.published()
		assert.Zero(t, queries)
	})
}

// A reply that ends while the followers query waits does not wait for it, nor cancel
// it: the query ends by itself (a cancelled call is an error in logs and traces).
func TestPublisherLeavesAPendingQueryUncancelled(t *testing.T) {
	chat := &fakeChat{hold: make(chan struct{}), answered: make(chan struct{})}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		inActivity(t, chat, func(p *publisher) {
			p.add("Hello")
			time.Sleep(5 * testInterval) // the query is asked, and waits
		})
	}()
	select {
	case <-closed:
	case <-time.After(followersTimeout / 2):
		t.Fatal("close waited for the followers query")
	}
	close(chat.hold)
	<-chat.answered
	chat.mu.Lock()
	defer chat.mu.Unlock()
	assert.Equal(t, 1, chat.queries)
	assert.NoError(t, chat.cancelled, "the query ran to its answer")
	assert.Empty(t, chat.texts, "unknown followers at close: nothing published")
}
