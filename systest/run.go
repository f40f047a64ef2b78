package systest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/wire"
)

// actionTimeout bounds one action; an action still waiting then is a stuck chat.
const actionTimeout = 90 * time.Second

// settleTimeout bounds the wait, at the end of a round, for every chat to finish its
// turns (approving what waits for a person).
const settleTimeout = 2 * time.Minute

// Outcomes of a user message.
const (
	outAnswered  = "answered"  // its turn's replies came back (Send or Approve)
	outSuspended = "suspended" // its turn waits for an approval
	outFailed    = "failed"    // TurnFailed: the turn left nothing in the history
	// outFailedAfterTools: TurnFailed for a turn resumed after an approval: its message
	// and its tools' results stay in the history, with no answer after them.
	outFailedAfterTools = "failed after its tools ran"
	outRefused          = "refused" // refused before anything was written
	outPosted           = "posted"  // signalled; what became of it is read from History
)

// msgState is what became of one user message.
type msgState struct {
	id     string
	text   string
	size   int
	posted bool
	// suspended: its turn waited for an approval, so Send returned only part of it.
	suspended bool
	group     int // acceptance order: a later group was accepted after an earlier one
	outcome   string
	replies   []string // message ids of the replies Send returned
	texts     []string // their texts
	detail    string   // an error's message
	// taken: refused because its messageId was another message's.
	taken bool
}

// location is where a chat lives: a namespace index and a workflow id.
type location struct {
	ns int
	id string
}

// chatRun is one chat of the round, as the runner knows it.
type chatRun struct {
	idx       int
	loc       location
	locations []location // every place it lived at, oldest first (migrations)
	maxBytes  int
	limit     int
	budget    int // HistoryBudget.MaxEvents (0 = default)
	agents    []string
	msgs      map[string]*msgState
	order     []string // ids in the order they were sent
	group     int
	// prefix are the message ids of the document it was imported from, and pending
	// the document's pending turns.
	prefix  []string
	pending []string
	// resumedEnds are the tool messages that may end a turn of the imported document
	// (inherit): a turn an earlier chat of its lineage resumed and whose agent failed.
	resumedEnds map[string]bool
	started     bool
	// refuses: its message store refuses writes part of the time (refusingStore);
	// stalled: it stopped taking turns for that (StoreRefused), as State said at the end.
	refuses bool
	stalled bool
	// streamed is what the chat's streams (at every location) show of its turns, read
	// when the chat is checked: how a posted turn ended, which History cannot tell.
	streamed map[string]streamedTurn
}

func (c *chatRun) hasFailing() bool {
	for _, a := range c.agents {
		if specOf(a).Fails {
			return true
		}
	}
	return false
}

// Runner executes the actions of one round against the world.
type Runner struct {
	w     *World
	name  string // unique id prefix of the round's chats
	chats map[int]*chatRun
	// bg outlives single actions, for Sends left in flight; inflight counts them.
	bg        context.Context
	stopBg    context.CancelFunc
	inflight  sync.WaitGroup
	lateFuncs []func()

	mu         sync.Mutex
	log        []string
	violations []string
}

// NewRunner returns a runner whose chats are named "<name>-c<i>".
func NewRunner(w *World, name string) *Runner {
	return &Runner{w: w, name: name, chats: map[int]*chatRun{}}
}

func (r *Runner) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

// violate records a broken invariant, found while acting.
func (r *Runner) violate(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

// Log is the action log so far: each action and what it did.
func (r *Runner) Log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

// Run performs the actions in order. It returns an error only when the world itself
// failed (a worker that would not start); broken invariants are collected for Check.
func (r *Runner) Run(ctx context.Context, actions []Action) error {
	r.bg, r.stopBg = context.WithTimeout(ctx, time.Duration(len(actions))*actionTimeout+2*settleTimeout)
	for _, a := range actions {
		began := time.Now()
		res, err := r.do(ctx, a)
		if err != nil {
			r.logf("%v → world error: %v", a, err)
			return fmt.Errorf("systest: %v: %w", a, err)
		}
		r.logf("%v → %s [%s]", a, res, time.Since(began).Round(time.Millisecond))
	}
	return nil
}

func (r *Runner) do(ctx context.Context, a Action) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	switch a.Op {
	case opKill:
		return r.w.Kill(ctx, a.NS, a.Worker, a.Variant)
	case opRestart:
		return r.w.Restart(ctx, a.NS, a.Worker, a.Variant)
	case opStart:
		return r.start(ctx, a), nil
	}
	c := r.chats[a.Chat]
	if c == nil || !c.started {
		return "skipped: the chat never started", nil
	}
	switch a.Op {
	case opSend:
		return r.send(ctx, c, a)
	case opPost:
		return r.post(ctx, c, a.ID, a.Size), nil
	case opBurst:
		return r.burst(ctx, c, a), nil
	case opApprove:
		return r.approve(ctx, c, a.Approve), nil
	case opRetry:
		return r.retry(ctx, c), nil
	case opExport:
		return r.exportImport(ctx, c, a.Target), nil
	case opHandover:
		return r.handover(ctx, c, a), nil
	case opEdit:
		return r.importEdited(ctx, c, a.Target, a.Edit), nil
	case opMigrate:
		return r.migrate(ctx, c, a.NewID), nil
	}
	return "", fmt.Errorf("unknown op %q", a.Op)
}

func (r *Runner) chatID(i int) string { return fmt.Sprintf("%s-c%d", r.name, i) }

func (r *Runner) newChat(i, ns int, id string, agents []string, maxBytes int) *chatRun {
	c := &chatRun{idx: i, loc: location{ns, id}, locations: []location{{ns, id}}, maxBytes: maxBytes,
		limit: maxBytes, agents: agents, msgs: map[string]*msgState{}}
	if c.limit == 0 {
		c.limit = wire.DefaultMaxMessageBytes
	}
	r.chats[i] = c
	return c
}

func (r *Runner) start(ctx context.Context, a Action) string {
	c := r.newChat(a.Chat, 0, r.chatID(a.Chat), a.Agents, a.MaxBytes)
	c.budget, c.refuses = a.Budget, a.Refuses > 0
	if a.Refuses > 0 {
		if err := listRefusing(r.w.Dir, c.loc.id, a.Refuses); err != nil {
			r.violate("%v: %v", a, err)
		}
	}
	// A small window, so that pages are written at every continue-as-new.
	opts := agentchat.StartOptions{ChatID: c.loc.id, Participants: a.Agents, MaxMessageBytes: a.MaxBytes,
		History: &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4, IndexFanout: 2}}
	if a.Budget > 0 {
		opts.HistoryBudget = wire.HistoryBudget{MaxEvents: a.Budget}
	}
	st, err := r.w.Client(0).Start(ctx, opts)
	if err != nil && a.MaxBytes > wire.MaxMessageBytesLimit && strings.Contains(strings.ToLower(err.Error()), "maxmessagebytes") {
		return "refused: " + firstLine(err.Error()) // a limit over what any chat takes
	}
	if err != nil {
		r.violate("%v: start failed: %v", a, err)
		return "error: " + err.Error()
	}
	c.started = true
	return "started, status " + st.Status
}

// newMessage is user message id of size bytes as the chat counts them against its
// limit (wire.SendMessageInput.Bytes: the encoded message, not its text), or just
// its id when that is larger. Its size is what it encodes to.
func newMessage(id string, size int) *msgState {
	text := id + " "
	if n := size - messageBytes(id, text); n > 0 {
		text += bigText(n) // ASCII without escapes: one byte of JSON each
	}
	return &msgState{id: id, text: text, size: messageBytes(id, text)}
}

// messageBytes is the size of user message id with text, as the chat counts it.
func messageBytes(id, text string) int {
	return wire.SendMessageInput{MessageID: id, Text: text}.Bytes()
}

// chatErr returns err's application error type and message ("" when it has none).
func chatErr(err error) (typ, msg string) {
	var ce *agentchat.Error
	if errors.As(err, &ce) {
		return ce.Type, ce.Message
	}
	return "", ""
}

// accept records a message sent as m, in a new acceptance group unless group >= 0.
func (c *chatRun) accept(m *msgState, group int) {
	if group < 0 {
		c.group++
		group = c.group
	}
	m.group = group
	c.msgs[m.id] = m
	c.order = append(c.order, m.id)
}

// sendOne sends one turn and records its outcome; it returns a summary.
func (r *Runner) sendOne(ctx context.Context, c *chatRun, id string, size, group int) string {
	m := newMessage(id, size)
	c.accept(m, group)
	return r.sendAndWait(c, []*msgState{m})
}

func (r *Runner) settleSend(ctx context.Context, c *chatRun, m *msgState, res agentchat.TurnResult, err error) string {
	if err == nil {
		m.outcome = outAnswered
		if len(res.AwaitingApproval) > 0 {
			m.outcome, m.suspended = outSuspended, true
		}
		for _, msg := range res.Messages {
			m.replies = append(m.replies, msg.MessageID)
			m.texts = append(m.texts, msg.Text())
		}
		if m.size > c.limit {
			r.violate("chat c%d: message %s of %d bytes was accepted; the chat's limit is %d", c.idx, m.id, m.size, c.limit)
		}
		return fmt.Sprintf("%s %s, %d replies", m.id, m.outcome, len(res.Messages))
	}
	typ, msg := chatErr(err)
	m.detail = err.Error()
	switch {
	case ctx.Err() != nil:
		m.outcome = outFailed
		r.violate("chat c%d: message %s: no answer within %s (stuck): %v", c.idx, m.id, actionTimeout, err)
	case typ == wire.ErrTypeInvalidMessage && strings.Contains(msg, fmt.Sprintf("messageId %q is taken", m.id)):
		m.outcome, m.taken = outRefused, true // checkHistory checks that it was
	case typ == wire.ErrTypeStoreRefused && c.refuses:
		m.outcome = outRefused // the chat stalled: its store refused its bodies
	case typ == wire.ErrTypeTurnFailed && c.refuses && strings.Contains(msg, StoreRefusal):
		m.outcome = outFailed // the store refused the reply's body
	case typ == wire.ErrTypeInvalidMessage:
		m.outcome = outRefused
		if m.size > wire.MaxMessageBytesLimit && strings.Contains(msg, "bytes") {
			break // over what any chat takes: refused by the client, naming MaxMessageBytesLimit
		}
		if m.size <= c.limit {
			r.violate("chat c%d: message %s of %d bytes refused within the chat's limit %d: %s", c.idx, m.id, m.size, c.limit, msg)
		} else if !strings.Contains(msg, strconv.Itoa(c.limit)) {
			r.violate("chat c%d: message %s refused without naming the limit %d: %s", c.idx, m.id, c.limit, msg)
		}
	case typ == wire.ErrTypeAwaitingApproval:
		m.outcome = outRefused
	case errors.Is(err, agentchat.ErrChatMigrated):
		// Queued when the chat migrated: carried in the document, answered there
		// (README, Migration), so what became of it is read from History, as for a post.
		m.outcome, m.posted = outPosted, true
	case typ == wire.ErrTypeTurnFailed:
		m.outcome = outFailed
		if !strings.Contains(msg, Refusal) {
			r.violate("chat c%d: message %s: the turn failed, not by the script's refusal: %s", c.idx, m.id, msg)
		}
	default:
		m.outcome = outFailed
		r.violate("chat c%d: message %s: unexpected error (type %q): %v", c.idx, m.id, typ, err)
	}
	return fmt.Sprintf("%s %s (%s)", m.id, m.outcome, firstLine(m.detail))
}

func (r *Runner) send(ctx context.Context, c *chatRun, a Action) (string, error) {
	if a.KillAfter <= 0 {
		return r.sendOne(ctx, c, a.ID, a.Size, -1), nil
	}
	killed := make(chan string, 1)
	go func() {
		time.Sleep(a.KillAfter)
		what, err := r.w.Kill(ctx, c.loc.ns, a.Worker, a.Variant)
		if err != nil {
			what = "kill failed: " + err.Error()
			r.violate("%v: %s", a, what)
		}
		killed <- what
	}()
	res := r.sendOne(ctx, c, a.ID, a.Size, -1)
	return res + "; " + <-killed, nil
}

func (r *Runner) post(ctx context.Context, c *chatRun, id string, size int) string {
	m := newMessage(id, size)
	m.posted = true
	c.accept(m, -1)
	return r.postOne(ctx, c, m)
}

func (r *Runner) postOne(ctx context.Context, c *chatRun, m *msgState) string {
	_, err := r.w.Client(c.loc.ns).Post(ctx, c.loc.id, agentchat.SendMessageInput{MessageID: m.id, Text: m.text})
	if err != nil {
		m.outcome, m.detail = outRefused, err.Error()
		if m.size <= c.limit {
			r.violate("chat c%d: post %s of %d bytes refused within the chat's limit %d: %v", c.idx, m.id, m.size, c.limit, err)
		}
		return fmt.Sprintf("%s refused (%s)", m.id, firstLine(err.Error()))
	}
	m.outcome = outPosted
	return m.id + " posted"
}

func (r *Runner) approve(ctx context.Context, c *chatRun, approve bool) string {
	st, err := r.state(ctx, c.loc)
	if err != nil {
		r.violate("chat c%d: State failed: %v", c.idx, err)
		return "State failed: " + err.Error()
	}
	if len(st.PendingApprovals) == 0 {
		return "nothing to approve"
	}
	return r.decide(ctx, c, st.PendingApprovals[0], approve)
}

// decide approves or rejects one pending call and records what the resumed turn did.
func (r *Runner) decide(ctx context.Context, c *chatRun, p agentchat.PendingApproval, approve bool) string {
	in := agentchat.ApproveInput{CallID: p.CallID, Approved: approve, By: "systest"}
	if !approve {
		in.Reason = "systest says no"
	}
	res, err := r.w.Client(c.loc.ns).Approve(ctx, c.loc.id, in)
	m := c.msgs[p.TurnID]
	if err != nil {
		typ, msg := chatErr(err)
		if typ == wire.ErrTypeTurnFailed && strings.Contains(msg, Refusal) {
			if m == nil { // a turn of the document the chat was imported from
				m = c.importedTurn(p.TurnID)
			}
			m.outcome, m.suspended = outFailed, true
			return fmt.Sprintf("call %s: the resumed turn failed by the script (%s)", p.CallID, firstLine(msg))
		}
		r.violate("chat c%d: approve %s (%t): %v", c.idx, p.CallID, approve, err)
		return "error: " + err.Error()
	}
	var foreign []string
	for _, msg := range res.Messages {
		if !strings.HasPrefix(msg.MessageID, res.MessageID+"/") {
			foreign = append(foreign, msg.MessageID)
		}
	}
	if len(foreign) > 0 {
		r.violate("chat c%d: Approve of %s for turn %s returned messages of other turns: %v", c.idx, p.CallID, res.MessageID, foreign)
	}
	if m != nil {
		for _, msg := range res.Messages {
			if slices.Contains(foreign, msg.MessageID) {
				continue
			}
			m.replies = append(m.replies, msg.MessageID)
			m.texts = append(m.texts, msg.Text())
		}
		m.suspended = true
		if len(res.AwaitingApproval) == 0 && res.MessageID == m.id {
			m.outcome = outAnswered
		}
	}
	return fmt.Sprintf("call %s approved=%t: turn %s, %d messages, %d still awaited", p.CallID, approve,
		res.MessageID, len(res.Messages), len(res.AwaitingApproval))
}

// retry sends the earliest message Send answered directly again: the same answer must
// come back.
func (r *Runner) retry(ctx context.Context, c *chatRun) string {
	for _, id := range c.order {
		m := c.msgs[id]
		if m.posted || m.suspended || m.outcome != outAnswered || len(m.replies) == 0 {
			continue
		}
		res, err := r.w.Client(c.loc.ns).Send(ctx, c.loc.id, agentchat.SendMessageInput{MessageID: id, Text: m.text})
		if err != nil {
			r.violate("chat c%d: retry of answered %s failed: %v", c.idx, id, err)
			return "error: " + err.Error()
		}
		var ids []string
		sameTexts := len(res.Messages) == len(m.texts)
		for i, msg := range res.Messages {
			ids = append(ids, msg.MessageID)
			// A message whose body moved to the message store comes as a reference (no
			// contents), as a turn result may; History returns it whole.
			if sameTexts && msg.Contents != nil && msg.Text() != m.texts[i] {
				sameTexts = false
			}
		}
		if !equal(ids, m.replies) || !sameTexts {
			r.violate("chat c%d: retry of %s answered %v, first answer was %v", c.idx, id, ids, m.replies)
			return fmt.Sprintf("retried %s: ANOTHER answer %v", id, ids)
		}
		return "retried " + id + ": same answer"
	}
	return "nothing answered to retry"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
