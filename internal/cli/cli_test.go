package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/internal/syncbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/chatmcp"
	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// result is what one run of the command line left behind.
type result struct {
	code     int
	out, err string
}

// lines returns the non-empty lines of Out.
func (r result) lines() []string {
	var out []string
	for l := range strings.SplitSeq(r.out, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- out:\n%s--- err:\n%s", r.code, r.out, r.err)
}

// execute runs the command line with args and in as standard input.
func execute(t *testing.T, in string, args ...string) result {
	t.Helper()
	var out, errOut strings.Builder
	code := cli.Execute(t.Context(), args, cli.Streams{In: strings.NewReader(in), Out: &out, Err: &errOut})
	return result{code: code, out: out.String(), err: errOut.String()}
}

// starter runs the command line against h's server and task queue.
func starter(t *testing.T, h *testenv.Harness, in string, args ...string) result {
	t.Helper()
	return execute(t, in, append([]string{"--address", testenv.Address(t), "--task-queue", h.TaskQueue}, args...)...)
}

// ok runs starter and requires exit code 0 and nothing on Err.
func ok(t *testing.T, h *testenv.Harness, args ...string) result {
	t.Helper()
	r := starter(t, h, "", args...)
	require.Equal(t, 0, r.code, "%v\n%v", args, r)
	require.Empty(t, r.err, "%v", args)
	return r
}

// fails runs starter, requires exit code 1, nothing on Out and exactly one line
// "starter: ..." on Err, and returns that line.
func fails(t *testing.T, h *testenv.Harness, args ...string) string {
	t.Helper()
	var r result
	if h == nil {
		r = execute(t, "", args...)
	} else {
		r = starter(t, h, "", args...)
	}
	require.Equal(t, 1, r.code, "%v\n%v", args, r)
	assert.Empty(t, r.out, "%v", args)
	require.True(t, strings.HasSuffix(r.err, "\n"), "%q", r.err)
	line := strings.TrimSuffix(r.err, "\n")
	assert.NotContains(t, line, "\n", "the error is one line")
	assert.True(t, strings.HasPrefix(line, "starter: "), "%q", line)
	return line
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(r.out), &v), "%s", r.out)
	return v
}

// The seed's thread through the command line: the second turn's reply uses the first.
func TestStartThenSendRemembersEarlierTurn(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)

	r := ok(t, h, "start", "--chat", id, "--agents", "helper")
	assert.Equal(t, []string{
		"started chat " + id + " with helper",
		`send a turn:  go run ./starter send --chat ` + id + ` "Hello"`,
	}, r.lines())

	r = ok(t, h, "send", "--chat", id, "--author", "Alice", "My name is Alice")
	require.Len(t, r.lines(), 1, "one reply, no completion line: %s", r.out)
	assert.True(t, strings.HasPrefix(r.out, "Helper: [offline] helper received 2 messages"), r.out)

	r = ok(t, h, "send", "--chat", id, "What's", "my", "name?") // words are joined with spaces
	require.Len(t, r.lines(), 1, r.out)
	reply := r.lines()[0]
	assert.True(t, strings.HasPrefix(reply, "Helper: [offline] helper"), reply)
	assert.Contains(t, reply, `you said "My name is Alice"`)
	assert.Contains(t, reply, `Last user message: "What's my name?"`)
	assert.Equal(t, 2, h.Model.Requests("helper"))

	hist, err := h.Client.History(t.Context(), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Equal(t, 4, hist.Total)
	assert.Equal(t, "Alice", hist.Messages[0].AuthorName, "--author reached the chat")
	assert.Empty(t, hist.Messages[2].AuthorName)
}

func TestStartJSONPrintsTheState(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	st := decode[agentchat.StateResult](t, ok(t, h, "start", "--chat", id, "--agents", "writer,reviewer", "--json"))
	assert.Equal(t, id, st.ChatID)
	assert.Equal(t, "running", st.Status)
	require.Len(t, st.Participants, 2)
	assert.Equal(t, "writer", st.Participants[0].ID)
	assert.Equal(t, "Reviewer", st.Participants[1].Name)
	assert.Zero(t, st.MessageCount)
}

func TestStartWithoutChatIDMakesOne(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	r := ok(t, h, "start", "--agents", "helper")
	require.Len(t, r.lines(), 2, r.out)
	id, found := strings.CutPrefix(r.lines()[0], "started chat ")
	require.True(t, found, r.out)
	id = strings.TrimSuffix(id, " with helper")
	assert.True(t, strings.HasPrefix(id, "chat-"), id)
	st, err := h.Client.State(t.Context(), id)
	require.NoError(t, err, "the printed id is the chat's")
	assert.Equal(t, "running", st.Status)
}

func TestSendWithoutChatRunsATemporaryThread(t *testing.T) {
	h := testenv.New(t, testenv.Options{})

	r := ok(t, h, "send", "Hello, how are you?")
	lines := r.lines()
	require.Len(t, lines, 2)
	assert.Equal(t, `Helper: [offline] helper received 2 messages. First user message: "Hello, how are you?". Last user message: "Hello, how are you?".`,
		lines[0])
	assert.Regexp(t, `^\(temporary thread run-[0-9a-f-]{36}; its workflow has completed\)$`, lines[1])

	res := decode[agentchat.TurnResult](t, ok(t, h, "send", "--json", "--id", "tmp-1", "Hi again"))
	assert.Equal(t, "tmp-1", res.MessageID)
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "helper", res.Messages[0].AgentID)
	assert.Equal(t, "tmp-1/1", res.Messages[0].MessageID)
	assert.Contains(t, res.Messages[0].Text(), `Last user message: "Hi again"`)
	assert.False(t, res.IsComplete, "a temporary thread ending is not the termination strategy")
	assert.Equal(t, 2, h.Model.Requests("helper"), "each temporary thread is a new conversation")
}

func TestSendWithoutChatTakesAgents(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	res := decode[agentchat.TurnResult](t, ok(t, h, "send", "--agents", "writer,reviewer", "--json", "Write a slogan"))
	require.Len(t, res.Messages, 2)
	assert.Equal(t, "writer", res.Messages[0].AgentID)
	assert.Equal(t, "reviewer", res.Messages[1].AgentID)
	assert.Zero(t, h.Model.Requests("helper"))
}

func TestStateJSONAndHuman(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	ok(t, h, "send", "--chat", id, "--id", "m1", "--author", "Alice", "My name is Alice")
	ok(t, h, "send", "--chat", id, "--id", "m2", "What's my name?")

	st := decode[agentchat.StateResult](t, ok(t, h, "state", "--chat", id, "--json"))
	assert.Equal(t, id, st.ChatID)
	assert.Equal(t, "running", st.Status)
	assert.Equal(t, 4, st.MessageCount)
	assert.Equal(t, 2, st.TurnCount)
	assert.False(t, st.IsComplete)
	assert.Empty(t, st.PendingTurns)
	require.NotNil(t, st.LastMessage)
	assert.Equal(t, "m2/1", st.LastMessage.MessageID)
	require.NotNil(t, st.Usage, "the replies' usage")
	assert.Positive(t, st.Usage.InputTokens)

	r := ok(t, h, "state", "--chat", id)
	for _, want := range []string{
		"chat:          " + id + "\n",
		"status:        running\n",
		"participants:  helper (Helper, chat_completion)\n",
		"messages:      4 messages in 2 turns\n",
		"complete:      no\n",
		"pending turns: none\n",
		"selection:     sequential ",
		"termination:   maxIterations ",
		fmt.Sprintf("usage:         2 calls, %d input tokens, %d output tokens\n", st.Usage.InputTokens, st.Usage.OutputTokens),
		fmt.Sprintf("  helper:      2 calls, %d input tokens, %d output tokens\n", st.Usage.InputTokens, st.Usage.OutputTokens),
		"last message:  Helper: [offline] helper received 4 messages.",
	} {
		assert.Contains(t, r.out, want)
	}
	assert.NotContains(t, r.out, "active turn:")
	assert.NotContains(t, r.out, "last error:")
	last := r.lines()[len(r.lines())-1]
	text, found := strings.CutPrefix(last, "last message:  Helper: ")
	require.True(t, found, last)
	assert.Len(t, []rune(text), 120, "a long last message is cut to 120 characters")
	assert.True(t, strings.HasSuffix(text, "…"), text)
}

// send --no-wait to a chat whose worker has stopped posts the turn and says that it
// waits for a worker, even while the stopped worker is still listed among the task
// queue's pollers; with a worker running it says nothing more.
func TestPostWithoutAWorkerSaysTheTurnWaits(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	r := ok(t, h, "send", "--chat", id, "--no-wait", "--id", "p1", "with a worker")
	assert.Equal(t, "posted turn p1 to chat "+id+"\n", r.out)
	assert.NotContains(t, r.err, "no worker")

	h.StopWorker()
	r = starter(t, h, "", "send", "--chat", id, "--no-wait", "--id", "p2", "without one")
	require.Equal(t, 0, r.code, "%v", r)
	assert.Equal(t, "posted turn p2 to chat "+id+"\n", r.out)
	assert.Contains(t, r.err, "note: no worker has run chat "+id+"'s workflow task")
	assert.Contains(t, r.err, "the turn waits in the chat")

	h.StartWorker(t)
	require.Eventually(t, func() bool {
		return decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json")).Total == 4
	}, 20*time.Second, 100*time.Millisecond, "the posted turn is answered once a worker runs")
}

// While a turn is being answered, State shows it and the user's message as the last one.
func TestStateDuringATurn(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"helper": {{Text: "sorry for the wait", Delay: wire.Duration(2 * time.Second)}},
	}}})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	r := ok(t, h, "send", "--chat", id, "--no-wait", "--id", "slow-1", "Take your time")
	assert.Equal(t, "posted turn slow-1 to chat "+id+"\n", r.out)

	require.Eventually(t, func() bool {
		return decode[agentchat.StateResult](t, ok(t, h, "state", "--chat", id, "--json")).ActiveTurn == "slow-1"
	}, 10*time.Second, 20*time.Millisecond)
	r = ok(t, h, "state", "--chat", id)
	assert.Contains(t, r.out, "active turn:   slow-1\n")
	assert.Contains(t, r.out, "last message:  user: Take your time\n", "a user message without author is shown as user")

	require.Eventually(t, func() bool {
		return decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json")).Total == 2
	}, 10*time.Second, 50*time.Millisecond)
	r = ok(t, h, "history", "--chat", id)
	assert.Equal(t, []string{
		"user: Take your time",
		"Helper: [offline] helper: sorry for the wait",
		"(2 of 2 messages, from 0)",
	}, r.lines())
}

func TestHistoryJSONAndPaging(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	for i := 1; i <= 3; i++ {
		ok(t, h, "send", "--chat", id, "--id", fmt.Sprintf("m%d", i), "--author", "Alice", fmt.Sprintf("turn %d", i))
	}

	all := decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json"))
	assert.Equal(t, 6, all.Total)
	assert.Equal(t, 0, all.Offset)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1", "m3", "m3/1"}, messageIDs(all.Messages))

	page := decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json", "--offset", "2", "--limit", "3"))
	assert.Equal(t, 6, page.Total)
	assert.Equal(t, 2, page.Offset)
	assert.Equal(t, []string{"m2", "m2/1", "m3"}, messageIDs(page.Messages))

	tail := decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json", "--offset", "5", "--limit", "10"))
	assert.Equal(t, []string{"m3/1"}, messageIDs(tail.Messages))

	r := ok(t, h, "history", "--chat", id, "--offset", "1", "--limit", "2")
	lines := r.lines()
	require.Len(t, lines, 3, r.out)
	assert.True(t, strings.HasPrefix(lines[0], "Helper: [offline] helper received 2 messages."), lines[0])
	assert.Equal(t, "Alice: turn 2", lines[1])
	assert.Equal(t, "(2 of 6 messages, from 1)", lines[2])

	r = ok(t, h, "history", "--chat", id, "--offset", "99")
	assert.Equal(t, "(0 of 6 messages, from 6)\n", r.out)

	// --last N: the latest N messages, oldest of them first.
	last := decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json", "--last", "3"))
	assert.Equal(t, []string{"m2/1", "m3", "m3/1"}, messageIDs(last.Messages))
	assert.Equal(t, 3, last.Offset)
	assert.Equal(t, 6, last.Total)
	r = ok(t, h, "history", "--chat", id, "--last", "2")
	lines = r.lines()
	require.Len(t, lines, 3, r.out)
	assert.Equal(t, "Alice: turn 3", lines[0])
	assert.Equal(t, "(2 of 6 messages, from 4)", lines[2])
	more := decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json", "--last", "50"))
	assert.Equal(t, messageIDs(all.Messages), messageIDs(more.Messages), "more than the chat holds: all of it")
	assert.Contains(t, fails(t, h, "history", "--chat", id, "--last", "2", "--offset", "1"), "--last")
	assert.Contains(t, fails(t, h, "history", "--chat", id, "--last", "2", "--limit", "1"), "--last")
	assert.Contains(t, fails(t, h, "history", "--chat", id, "--last", "-1"), "negative")
}

func messageIDs(msgs []agentchat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

func TestChatInteractive(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	r := starter(t, h, "Hello\n\n  /state  \nWhat's my name?\n/quit\nnever sent\n", "chat", "--chat", id, "--agents", "helper")
	require.Equal(t, 0, r.code, "%v", r)
	assert.Empty(t, r.err)

	lines := r.lines()
	require.NotEmpty(t, lines)
	assert.Equal(t, "chat "+id+": type a message and press Enter; commands: /state, /history, /approve CALL, /reject CALL [REASON], /help, /quit", lines[0])
	assert.NotContains(t, r.out, "you>", "no prompt when input is not a terminal")
	first := strings.Index(r.out, `Helper: [offline] helper received 2 messages. First user message: "Hello".`)
	state := strings.Index(r.out, "messages:      2 messages in 1 turn\n")
	second := strings.Index(r.out, `Helper: [offline] helper received 4 messages. First user message: "Hello". Last user message: "What's my name?".`)
	assert.True(t, first > 0 && state > first && second > state, "reply, state block, reply in order:\n%s", r.out)
	assert.Contains(t, r.out, "chat:          "+id+"\n")
	assert.NotContains(t, r.out, "never sent")
	assert.Equal(t, 2, h.Model.Requests("helper"), "blank lines and commands are not turns; /quit stops reading")

	// Again, on the chat that now exists (--agents does not restart it); /history and
	// end of input.
	r = starter(t, h, "/history\nAnd now?", "chat", "--chat", id, "--agents", "helper")
	require.Equal(t, 0, r.code, "%v", r)
	lines = r.lines()
	require.Len(t, lines, 1+4+1, r.out)
	assert.Equal(t, "user: Hello", lines[1])
	assert.Equal(t, "user: What's my name?", lines[3])
	assert.Contains(t, lines[5], `received 6 messages`)
	assert.Contains(t, lines[5], `Last user message: "And now?"`)
}

func TestChatWithoutAgentsNeedsAnExistingChat(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	line := fails(t, h, "chat", "--chat", "missing-"+testenv.ChatID(t))
	assert.Contains(t, line, "not found")
}

// A turn that fails is reported on Err and the conversation goes on.
func TestChatReportsAFailedTurnAndGoesOn(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"helper": {{Status: 401, Message: "Incorrect API key provided"}},
	}}})
	id := testenv.ChatID(t)
	r := starter(t, h, "Hello\nAre you there?\n", "chat", "--chat", id, "--agents", "helper")
	require.Equal(t, 0, r.code, "%v", r)
	errLines := strings.Split(strings.TrimSuffix(r.err, "\n"), "\n")
	require.Len(t, errLines, 1, r.err)
	assert.True(t, strings.HasPrefix(errLines[0], "error: "), errLines[0])
	assert.Contains(t, errLines[0], "Incorrect API key provided")
	assert.Contains(t, r.out, `Helper: [offline] helper received 2 messages. First user message: "Are you there?".`)
}

func TestGroupChatRunsUntilTheReviewerApproves(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"writer":   {{Text: "Tea: calm in a cup."}, {Text: "Tea: five minutes of calm."}},
		"reviewer": {{Text: "Name the benefit."}, {Text: "APPROVED"}},
	}}})
	id := testenv.ChatID(t)
	r := ok(t, h, "start", "--chat", id, "--agents", "writer,reviewer", "--termination", "regex",
		"--pattern", "APPROVED", "--termination-agents", "reviewer", "--max-iterations", "6")
	assert.Contains(t, r.out, "started chat "+id+" with writer, reviewer\n")

	r = ok(t, h, "send", "--chat", id, "Write a slogan for tea")
	assert.Equal(t, []string{
		"Writer: [offline] writer: Tea: calm in a cup.",
		"Reviewer: [offline] reviewer: Name the benefit.",
		"Writer: [offline] writer: Tea: five minutes of calm.",
		"Reviewer: [offline] reviewer: APPROVED",
		"(the chat is complete: its termination strategy ended it)",
	}, r.lines())

	st := decode[agentchat.StateResult](t, ok(t, h, "state", "--chat", id, "--json"))
	assert.True(t, st.IsComplete)
	assert.Equal(t, 5, st.MessageCount)

	line := fails(t, h, "send", "--chat", id, "One more?")
	assert.Contains(t, line, "closed")
	assert.Equal(t, 2, h.Model.Requests("reviewer"))
}

// In the interactive chat, a completing turn ends the session.
func TestChatEndsWhenTheGroupChatCompletes(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"reviewer": {{Text: "APPROVED"}},
	}}})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "writer,reviewer", "--pattern", "APPROVED")
	r := starter(t, h, "Write a slogan\nnever sent\n", "chat", "--chat", id)
	require.Equal(t, 0, r.code, "%v", r)
	lines := r.lines()
	require.Len(t, lines, 4, r.out)
	assert.True(t, strings.HasPrefix(lines[1], "Writer: "), lines[1])
	assert.Equal(t, "Reviewer: [offline] reviewer: APPROVED", lines[2])
	assert.Equal(t, "(the chat is complete)", lines[3])
	assert.Equal(t, 1, h.Model.Requests("writer"))

	// A session on the completed chat says so before any prompt.
	line := fails(t, h, "chat", "--chat", id)
	assert.Contains(t, line, "is completed: it takes no more turns")
}

// chat talks to a chat on the chat's own task queue, not the one --task-queue names
// for new chats (here the default, which no worker polls).
func TestChatFindsTheChatsTaskQueue(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	r := execute(t, "Hello\n", "--address", testenv.Address(t), "--worker-wait", "2s", "chat", "--chat", id)
	require.Equal(t, 0, r.code, "%v", r)
	assert.Contains(t, r.out, "Helper: [offline] helper received 2 messages.")
}

func TestSendSameIDTwiceAnswersOnce(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	first := ok(t, h, "send", "--chat", id, "--id", "same", "Hello")
	began := time.Now()
	again := ok(t, h, "send", "--chat", id, "--id", "same", "Hello")
	assert.Less(t, time.Since(began), 2*time.Second, "a replay waits for no stream event (it has none)")
	note := "(turn same was answered before: this is that answer; no model was called again)\n"
	assert.Equal(t, first.out+note, again.out, "the same answer, and a note that it is a replay")
	whole := ok(t, h, "send", "--chat", id, "--id", "same", "--no-stream", "Hello")
	assert.Equal(t, first.out+note, whole.out)
	assert.Contains(t, first.out, "Helper: [offline] helper received 2 messages.")
	assert.Equal(t, 1, h.Model.Requests("helper"))
	st := decode[agentchat.StateResult](t, ok(t, h, "state", "--chat", id, "--json"))
	assert.Equal(t, 2, st.MessageCount)
	assert.Equal(t, 1, st.TurnCount)
}

func TestErrors(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	existing := testenv.ChatID(t)
	ok(t, h, "start", "--chat", existing, "--agents", "helper")

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown agent", []string{"start", "--chat", testenv.ChatID(t), "--agents", "helper,ghost"},
			[]string{`"ghost"`, `"helper", "reviewer", "writer"`}},
		{"unknown agent alone", []string{"start", "--agents", "ghost"}, []string{`unknown agent id(s) "ghost"`}},
		{"typo'd agent", []string{"start", "--agents", "helpr"}, []string{`unknown agent id(s) "helpr" (did you mean "helper"?)`}},
		{"empty --id", []string{"send", "--chat", existing, "--id", "", "hi"}, []string{"--id is empty"}},
		{"empty --chat", []string{"send", "--chat", "", "hi"}, []string{"--chat is empty"}},
		{"empty --chat of state", []string{"state", "--chat", ""}, []string{"--chat is empty"}},
		{"empty --agents", []string{"start", "--agents", ""}, []string{"--agents is empty"}},
		{"unknown agent of a temporary thread", []string{"send", "--agents", "ghost", "hi"}, []string{`"ghost"`}},
		{"chat exists", []string{"start", "--chat", existing, "--agents", "helper"}, []string{existing, "already exists"}},
		{"state of a missing chat", []string{"state", "--chat", "missing-" + existing}, []string{"not found"}},
		{"history of a missing chat", []string{"history", "--chat", "missing-" + existing}, []string{"not found"}},
		{"send to a missing chat", []string{"send", "--chat", "missing-" + existing, "hi"}, []string{"not found"}},
		{"no-wait without chat", []string{"send", "--no-wait", "hi"}, []string{"--no-wait needs --chat"}},
		{"regex without pattern", []string{"start", "--agents", "helper", "--termination", "regex"}, []string{"--termination regex needs --pattern REGEX"}},
		{"missing --agents", []string{"start", "--chat", existing}, []string{`required flag(s) "agents" not set`}},
		{"missing --chat of state", []string{"state"}, []string{`required flag(s) "chat" not set`}},
		{"missing --chat of history", []string{"history"}, []string{`required flag(s) "chat" not set`}},
		{"missing --chat of chat", []string{"chat"}, []string{`required flag(s) "chat" not set`}},
		{"send without text", []string{"send", "--chat", existing}, []string{"needs the message text"}},
		{"agents with a chat", []string{"send", "--chat", existing, "--agents", "writer", "hi"}, []string{"--agents applies to a temporary thread only"}},
		{"unknown flag", []string{"state", "--chat", existing, "--bogus"}, []string{"unknown flag: --bogus"}},
		{"unknown command", []string{"bogus"}, []string{`unknown command "bogus"`}},
		{"stray argument", []string{"state", "--chat", existing, "extra"}, []string{"extra"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := fails(t, h, tc.args...)
			for _, w := range tc.want {
				assert.Contains(t, line, w)
			}
		})
	}
	assert.Zero(t, h.Model.TotalRequests(), "no failed command reached a model")
	hist, err := h.Client.History(t.Context(), existing, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Zero(t, hist.Total)
}

func TestUnreachableServerIsOneLine(t *testing.T) {
	line := fails(t, nil, "--address", "127.0.0.1:1", "state", "--chat", "x")
	assert.Contains(t, line, "127.0.0.1:1")
	assert.Contains(t, line, "server start")
}

func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		example string // "" when the command has none
	}{
		{nil, ""},
		{[]string{"demo"}, "go run ./starter demo --offline --stop-server"},
		{[]string{"start"}, "starter start --chat support-42 --agents helper"},
		{[]string{"send"}, `starter send --chat support-42 --id turn-7 "What's my name?"`},
		{[]string{"chat"}, "starter chat --chat support-42 --agents helper --author Alice"},
		{[]string{"state"}, "starter state --chat support-42 --json"},
		{[]string{"history"}, "starter history --chat support-42 --offset 10 --limit 5"},
		{[]string{"server"}, ""},
		{[]string{"server", "start"}, ""},
		{[]string{"server", "stop"}, ""},
		{[]string{"server", "status"}, ""},
	} {
		name := strings.Join(append([]string{"starter"}, tc.args...), " ")
		t.Run(name, func(t *testing.T) {
			r := execute(t, "", append(tc.args, "--help")...)
			require.Equal(t, 0, r.code, "%v", r)
			assert.Empty(t, r.err)
			assert.Contains(t, r.out, "Usage:\n  "+name)
			if tc.example != "" {
				assert.Contains(t, r.out, "Examples:\n")
				assert.Contains(t, r.out, tc.example)
			} else {
				assert.NotContains(t, r.out, "Examples:")
			}
		})
	}
}

func TestServerStatus(t *testing.T) {
	addr := testenv.Address(t)
	r := execute(t, "", "server", "status", "--listen", addr)
	require.Equal(t, 0, r.code, "%v", r)
	assert.Equal(t, "a Temporal server answers at "+addr+"\n", r.out)
	assert.Empty(t, r.err)

	// The global --address is where the user's server is; status checks it too.
	r = execute(t, "", "--address", addr, "server", "status")
	require.Equal(t, 0, r.code, "%v", r)
	assert.Equal(t, "a Temporal server answers at "+addr+"\n", r.out)

	// --listen wins over --address.
	line := fails(t, nil, "--address", addr, "server", "status", "--listen", "127.0.0.1:1")
	assert.Contains(t, line, "no Temporal server answers at 127.0.0.1:1")
	assert.Contains(t, line, "server start", "the error says what to do")

	line = fails(t, nil, "server", "status", "--listen", "127.0.0.1:1")
	assert.Contains(t, line, "no Temporal server answers at 127.0.0.1:1")
}

// server start leaves a server that already answers alone, and says where it is.
func TestServerStartFindsTheRunningServer(t *testing.T) {
	addr := testenv.Address(t)
	for _, args := range [][]string{
		{"server", "start", "--listen", addr, "--data", t.TempDir()},
		{"--address", addr, "server", "start", "--data", t.TempDir()},
	} {
		r := execute(t, "", args...)
		require.Equal(t, 0, r.code, "%v\n%v", args, r)
		assert.Equal(t, "a Temporal server already answers at "+addr+"\n", r.out, "%v", args)
		assert.Empty(t, r.err)
	}
}

// server stop with no server started from that folder fails on one line.
func TestServerStopWithoutAServer(t *testing.T) {
	line := fails(t, nil, "server", "stop", "--data", t.TempDir())
	assert.Contains(t, line, "nothing to stop")
}

// Interrupting chat while it waits for a line (Ctrl-C: starter/main.go cancels the
// context) ends it at once rather than after the next Enter.
func TestChatStopsWhenInterruptedAtThePrompt(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")

	in, typing := io.Pipe() // a user who types nothing
	t.Cleanup(func() { _ = typing.Close() })
	ctx, interrupt := context.WithCancel(t.Context())
	var out, errOut syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(ctx, []string{"--address", testenv.Address(t), "--task-queue", h.TaskQueue, "chat", "--chat", id},
			cli.Streams{In: in, Out: &out, Err: &errOut})
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "type a message") },
		10*time.Second, 10*time.Millisecond)
	select {
	case code := <-done:
		t.Fatalf("chat returned %d before any input or interrupt", code)
	case <-time.After(100 * time.Millisecond):
	}
	interrupt()
	select {
	case code := <-done:
		assert.Equal(t, 1, code)
		assert.Equal(t, "starter: context canceled\n", errOut.String())
	case <-time.After(5 * time.Second):
		t.Fatal("chat kept waiting for input after the interrupt")
	}
	assert.Zero(t, h.Model.TotalRequests())
}

// With no worker on the task queue, commands say so after --worker-wait instead of
// waiting for the answer.
func TestNoWorkerIsReportedNotAwaited(t *testing.T) {
	addr := testenv.Address(t)
	tc := testenv.Dial(t, "")
	queue := testenv.TaskQueue(t) // no worker ever polls it
	id := testenv.ChatID(t)
	_, err := tc.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: id, TaskQueue: queue},
		wire.WorkflowType, wire.AgentChatInput{Participants: []string{"helper"}})
	require.NoError(t, err)
	for _, args := range [][]string{
		{"send", "--chat", id, "hello?"},
		{"state", "--chat", id},
		{"history", "--chat", id},
		{"start", "--chat", id + "-2", "--agents", "helper"},
		{"send", "hello?"},
	} {
		r := execute(t, "", append([]string{"--address", addr, "--task-queue", queue, "--timeout", "20s", "--worker-wait", "500ms"}, args...)...)
		require.Equal(t, 1, r.code, "%v: %v", args, r)
		assert.Contains(t, r.err, "no worker is polling the task queue", "%v", args)
		assert.Contains(t, r.err, "go run ./worker --offline --task-queue "+queue, "%v", args)
		assert.Contains(t, r.err, "none polled it within 500ms", "%v", args)
	}
}

// A worker stopped a moment ago is still listed among the task queue's pollers, so
// the look at the pollers passes; every command still says within --worker-wait that
// no worker took its task, in one line with the command that starts one, and a start
// or import leaves nothing behind (the id is free once a worker is back). send's
// "still waiting" notice does not come with the error: it waits longer than the
// worker wait (here the notice's own delay is shorter).
func TestAWorkerStoppedAMomentAgoIsReportedWithinTheWorkerWait(t *testing.T) {
	defer cli.SetWaitNotice(time.Second)()
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	ok(t, h, "send", "--chat", id, "--id", "m1", "Hello")
	doc := filepath.Join(t.TempDir(), "doc.json")
	ok(t, h, "export", "--chat", id, "--out", doc)
	h.StopWorker()
	for _, args := range [][]string{
		{"start", "--chat", id + "-new", "--agents", "helper"},
		{"send", "--chat", id, "--id", "m2", "hello?"},
		{"send", "--chat", id, "--id", "m3", "--no-stream", "hello?"},
		{"send", "hello?"},
		{"state", "--chat", id},
		{"history", "--chat", id},
		{"export", "--chat", id, "--out", filepath.Join(t.TempDir(), "again.json")},
		{"import", "--chat", id + "-import", "--in", doc},
	} {
		began := time.Now()
		line := fails(t, h, append([]string{"--timeout", "2m", "--worker-wait", "2s"}, args...)...)
		took := time.Since(began)
		assert.Contains(t, line, "no worker is polling the task queue", "%v", args)
		assert.Contains(t, line, "go run ./worker --offline --task-queue "+h.TaskQueue, "%v", args)
		assert.Less(t, took, 10*time.Second, "%v waited %s", args, took)
	}
	h.StartWorker(t)
	ok(t, h, "start", "--chat", id+"-new", "--agents", "helper")
	ok(t, h, "import", "--chat", id+"-import", "--in", doc)
}

// The top-level help and mcp's own help name every tool the MCP server serves (the
// list was written out by hand and missed list_chats).
func TestHelpNamesEveryMCPTool(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"mcp", "--help"}} {
		r := execute(t, "", args...)
		for _, tool := range chatmcp.ToolNames {
			assert.Contains(t, r.out, tool, "%v", args)
		}
	}
}

// server status at an address where nothing answers says how to start a server at that
// address, not at TEMPORAL_ADDRESS or the default.
func TestServerStatusHintKeepsTheAddress(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	r := execute(t, "", "server", "status", "--address", "127.0.0.1:2", "--data", t.TempDir())
	require.NotEqual(t, 0, r.code, "%v", r)
	assert.Contains(t, r.err, "no Temporal server answers at 127.0.0.1:2")
	assert.Contains(t, r.err, "server start --listen 127.0.0.1:2")
}

// A turn a worker has taken but that answers slowly gets one "still waiting" note on
// stderr, after the worker wait has passed (so it is not a missing worker), naming
// the turn's --id for a safe retry on a chat; a temporary thread's note offers no
// --id, as sending again starts a new thread. The replies still come.
func TestSendSaysItStillWaitsForASlowTurn(t *testing.T) {
	defer cli.SetWaitNotice(100 * time.Millisecond)()
	h := testenv.New(t, testenv.Options{Model: offline.Options{Latency: 4 * time.Second}})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	for _, args := range [][]string{
		{"send", "--chat", id, "--id", "slow-1", "Hello"},
		{"send", "--chat", id, "--id", "slow-2", "--no-stream", "Hello"},
		{"send", "Hello"},
	} {
		r := starter(t, h, "", append([]string{"--worker-wait", "500ms"}, args...)...)
		require.Equal(t, 0, r.code, "%v\n%v", args, r)
		assert.NotEmpty(t, r.out, "%v: the reply is printed", args)
		assert.Equal(t, 1, strings.Count(r.err, "still waiting for the answer"), "%v: %q", args, r.err)
		if args[1] == "--chat" {
			assert.Contains(t, r.err, "--id "+args[4]+" retries it safely", "%v", args)
		} else {
			assert.NotContains(t, r.err, "--id", "%v: a temporary thread is new each time", args)
		}
	}
}

// A command pointed at an address where no server answers says so in a few words, with
// how to start one at that address and the flag that changes it: not gRPC's dial error.
func TestACommandWithNoServerAtItsAddressSaysHowToStartOne(t *testing.T) {
	line := fails(t, nil, "--address", "127.0.0.1:1", "list")
	assert.Contains(t, line, "no Temporal server answers at 127.0.0.1:1 (connection refused)")
	assert.Contains(t, line, "server start --listen 127.0.0.1:1")
	assert.Contains(t, line, "--address")
	assert.NotContains(t, line, "transport:", "not gRPC's words")

	// A command whose own --timeout runs out while it connects blames the timeout, not
	// a server that does answer.
	line = fails(t, nil, "--address", testenv.Address(t), "--timeout", "1ms", "list")
	assert.NotContains(t, line, "no Temporal server answers")
	assert.Contains(t, line, "--timeout of 1ms")
}

// A namespace the server does not have, and a chat it does not have, are said in the
// project's words, with what to do: not the SDK's "Namespace x is not found.".
func TestAMissingNamespaceOrChatIsSaidPlainly(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	line := fails(t, h, "--namespace", "no-such-namespace", "state", "--chat", "x")
	assert.Contains(t, line, `the server has no namespace "no-such-namespace"`)
	assert.Contains(t, line, "temporal operator namespace create --namespace no-such-namespace")
	line = fails(t, h, "state", "--chat", "no-such-chat-"+testenv.ChatID(t))
	assert.Contains(t, line, `chat not found in namespace "default"`)
	assert.NotContains(t, line, "describe", "not the client's internal step")
}

// A mistyped flag is answered with the closest flag of the command, as a mistyped
// command is with the closest command.
func TestAMistypedFlagSuggestsTheClosest(t *testing.T) {
	line := fails(t, nil, "state", "--caht", "x")
	assert.Equal(t, `starter: unknown flag: --caht (did you mean "--chat"?)`, line)
	line = fails(t, nil, "list", "--jsn")
	assert.Contains(t, line, `(did you mean "--json"?)`)
	line = fails(t, nil, "list", "--zzzzzz")
	assert.NotContains(t, line, "did you mean")
}

// Every command in a namespace the server lacks says so, with how to create it (start,
// a temporary thread and list too, not only state); a worker hint in another namespace
// than the default names it.
func TestEveryCommandSaysTheNamespaceIsMissing(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	for _, args := range [][]string{
		{"start", "--chat", "x", "--agents", "helper"},
		{"send", "hi"},
		{"list"},
		{"state", "--chat", "x"},
	} {
		line := fails(t, h, append([]string{"--namespace", "no-such-namespace"}, args...)...)
		assert.Contains(t, line, `the server has no namespace "no-such-namespace"`, "%v", args)
		assert.Equal(t, 1, strings.Count(line, "agentchat:"), "%v: %s", args, line)
	}
	ns := testenv.Namespace(t, "agentchat-noworker")
	line := fails(t, nil, "--address", testenv.Address(t), "--namespace", ns, "--task-queue", "q-"+testenv.ChatID(t), "--worker-wait", "300ms",
		"start", "--chat", "x", "--agents", "helper")
	assert.Contains(t, line, "go run ./worker --offline --namespace "+ns+" --task-queue q-")
}

// A list flag's items lose the spaces a shell keeps ("helper, writer"); an empty item
// is refused, naming the flag.
func TestListFlagItemsAreTrimmed(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	r := ok(t, h, "start", "--chat", id, "--agents", "helper, writer", "--json")
	st := decode[agentchat.StateResult](t, r)
	require.Len(t, st.Participants, 2)
	assert.Equal(t, "writer", st.Participants[1].ID)
	line := fails(t, h, "start", "--chat", id+"-2", "--agents", "helper,,writer")
	assert.Contains(t, line, "--agents has an empty item")
}

// A start cut short by the command's --timeout says the chat may exist, as the server
// may have created it: what the call left is named, not hidden.
func TestAStartCutShortSaysTheChatMayExist(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Latency: 6 * time.Second}})
	line := fails(t, h, "--timeout", "2s", "send", "--no-stream", "Hello")
	assert.Contains(t, line, "may have been created")
	assert.Contains(t, line, "--timeout of 2s")
}
