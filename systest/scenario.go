package systest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/agentchat/agentchat/wire"
)

// Operations of an Action.
const (
	opStart   = "start"   // start chat Chat with Agents, MaxBytes and Budget
	opSend    = "send"    // Send ID with Size bytes of text; KillAfter > 0 kills a worker meanwhile
	opPost    = "post"    // Post ID (the UserMessage signal)
	opBurst   = "burst"   // Burst sends and posts at once, IDs ID.1 … ID.n (odd ones posted)
	opApprove = "approve" // decide the chat's first pending approval: Approve, or reject
	opRetry   = "retry"   // Send an answered messageId again
	opExport  = "export"  // export the chat and import the document into the new chat Target
	opEdit    = "edit"    // export the chat, edit the document (Edit) and import it into Target
	opMigrate = "migrate" // migrate the chat to the other namespace (NewID: under a new id)
	// opHandover signals Reencrypt, which makes the chat continue as new at its next
	// boundary, and at once exports it (into the new chat Target) and sends a burst
	// (IDs ID.1 … ID.n): queries, updates and signals that arrive while the run hands
	// over to the next.
	opHandover = "handover"
	opKill     = "kill"    // SIGKILL worker Worker of namespace NS, start a new one with Variant
	opRestart  = "restart" // start a worker of NS with Variant, then stop worker Worker gracefully
)

// Action is one step of a round. The list of actions is a pure function of the
// generator's parameters (seed included), so a round is replayed by its seed; what an
// action did (its outcome) depends on timing and is logged beside it.
type Action struct {
	Step int
	Op   string
	// Chat is the logical chat (an index into the round's chats); -1 for fleet actions.
	Chat      int
	Agents    []string
	MaxBytes  int // opStart: the chat's maxMessageBytes (0 = default)
	Budget    int // opStart: HistoryBudget.MaxEvents (0 = default)
	Refuses   int // opStart: the percentage of the chat's writes its message store refuses (refusingStore)
	ID        string
	Size      int // opSend, opPost: the user message's size, encoded as the chat counts it (newMessage)
	Burst     int // opBurst, opHandover: how many turns
	Approve   bool
	KillAfter time.Duration
	Target    int    // opExport, opEdit, opHandover: the new chat's index
	Edit      string // opEdit: editSystem, editOpenCall or editWrongRole
	NewID     bool   // opMigrate
	NS        int    // fleet: namespace index
	Worker    int    // fleet: which worker of NS (modulo their number)
	Variant   string // fleet: the new worker's config
}

func (a Action) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", a.Step, a.Op)
	if a.Chat >= 0 {
		fmt.Fprintf(&b, " c%d", a.Chat)
	}
	switch a.Op {
	case opStart:
		fmt.Fprintf(&b, " agents=%s maxBytes=%d budget=%d", strings.Join(a.Agents, ","), a.MaxBytes, a.Budget)
		if a.Refuses > 0 {
			fmt.Fprintf(&b, " store-refuses=%d%%", a.Refuses)
		}
	case opSend, opPost:
		fmt.Fprintf(&b, " id=%s size=%d", a.ID, a.Size)
		if a.KillAfter > 0 {
			fmt.Fprintf(&b, " kill-after=%s worker=%d", a.KillAfter, a.Worker)
		}
	case opBurst:
		fmt.Fprintf(&b, " id=%s n=%d", a.ID, a.Burst)
	case opHandover:
		fmt.Fprintf(&b, " id=%s n=%d into=c%d", a.ID, a.Burst, a.Target)
	case opApprove:
		fmt.Fprintf(&b, " approve=%t", a.Approve)
	case opExport:
		fmt.Fprintf(&b, " into=c%d", a.Target)
	case opEdit:
		fmt.Fprintf(&b, " %s into=c%d", a.Edit, a.Target)
	case opMigrate:
		fmt.Fprintf(&b, " new-id=%t", a.NewID)
	case opKill, opRestart:
		fmt.Fprintf(&b, " ns=%d worker=%d variant=%s", a.NS, a.Worker, a.Variant)
	}
	return b.String()
}

// Params shape one round.
type Params struct {
	Seed int64
	// Chats is how many chats the round starts; Steps is the number of actions per chat.
	Chats, Steps int
	// AllFaults runs the action classes of known faults too.
	AllFaults bool
}

// chatPlan is what the generator knows of a chat.
type chatPlan struct {
	agents    []string
	limit     int  // maxMessageBytes in effect
	big       bool // may hold near-limit messages
	approvals bool
	fails     bool // has an agent whose turns may fail
	budget    int  // HistoryBudget.MaxEvents; > 0 continues as new every few turns
	turns     int  // message ids handed out
	imported  bool
	// replyLike are the reply-like user ids handed out (replyLikeID).
	replyLike map[string]bool
}

type generator struct {
	rng       *rand.Rand
	allFaults bool
	chats     []*chatPlan
	initial   int // chats started by the round (the others are imports)
	actions   []Action
}

// Generate returns the actions of the round p describes.
func Generate(p Params) []Action {
	g := &generator{rng: rand.New(rand.NewPCG(uint64(p.Seed), 0x5eed)), allFaults: p.AllFaults, initial: p.Chats}
	for i := 0; i < p.Chats; i++ {
		g.start()
	}
	for n := 0; n < p.Chats*p.Steps; n++ {
		if g.rng.IntN(100) < 8 {
			g.fleet()
			continue
		}
		g.chatAction(g.rng.IntN(len(g.chats)))
	}
	for i := range g.actions {
		g.actions[i].Step = i + 1
	}
	return g.actions
}

func (g *generator) add(a Action) { g.actions = append(g.actions, a) }

// usableAgents are the behaviours whose faults are not known, each as often as its
// weight: big replies cost seconds a turn under -race, so they come less often.
func (g *generator) usableAgents() []string {
	var out []string
	for _, s := range agentSpecs {
		if g.blocked(s.Faults...) {
			continue
		}
		n := 3
		if s.Big {
			n = 1
		}
		for range n {
			out = append(out, s.ID)
		}
	}
	return out
}

func (g *generator) start() {
	usable := g.usableAgents()
	n := 1 + g.rng.IntN(2)
	var agents []string
	for len(agents) < n {
		a := usable[g.rng.IntN(len(usable))]
		if !contains(agents, a) {
			agents = append(agents, a)
		}
	}
	p := &chatPlan{agents: agents, limit: wire.DefaultMaxMessageBytes}
	maxBytes := []int{0, 0, 64 << 10, wire.MaxMessageBytesLimit}[g.rng.IntN(4)]
	if g.rng.IntN(100) < 10 {
		maxBytes = 8 << 20 // over what Temporal can carry: must be refused, or work
	}
	if maxBytes > 0 {
		p.limit = maxBytes
	}
	for _, a := range agents {
		s := specOf(a)
		p.big = p.big || s.Big
		p.approvals = p.approvals || s.Approvals
		p.fails = p.fails || s.Fails
	}
	p.big = p.big || g.rng.IntN(100) < 30
	budget := 0
	if g.rng.IntN(100) < 40 {
		budget = 30 + g.rng.IntN(40) // continue as new every few turns
	}
	p.budget = budget
	refuses := 0
	if g.rng.IntN(100) < 30 {
		refuses = 50
	}
	g.chats = append(g.chats, p)
	g.add(Action{Op: opStart, Chat: len(g.chats) - 1, Agents: agents, MaxBytes: maxBytes, Budget: budget, Refuses: refuses})
}

func (g *generator) nextID(c int) string {
	p := g.chats[c]
	p.turns++
	return fmt.Sprintf("c%d-t%d", c, p.turns)
}

// userID is the messageId of a user turn of chat c: mostly a new plain id (nextID),
// sometimes one chosen to collide with a reply's (replyLikeID).
func (g *generator) userID(c int) string {
	if g.rng.IntN(100) < 20 {
		if id := g.replyLikeID(c); id != "" {
			return id
		}
	}
	return g.nextID(c)
}

// replyLikeID returns, for chat c, a user id in the form of a reply's, "<turn>/<n>":
// of a past turn (taken when that turn has n messages after it: the chat must refuse
// it), or of the next turn (free now: that turn's replies must skip it). "" when the
// id was handed out already.
func (g *generator) replyLikeID(c int) string {
	p := g.chats[c]
	turn := p.turns + 1
	if p.turns > 0 && g.rng.IntN(2) == 0 {
		turn = 1 + g.rng.IntN(p.turns)
	}
	n := 1 // every answered turn has a first reply: mostly a taken id
	if g.rng.IntN(100) < 40 {
		n = 2 + g.rng.IntN(2)
	}
	id := fmt.Sprintf("c%d-t%d/%d", c, turn, n)
	if p.replyLike == nil {
		p.replyLike = map[string]bool{}
	}
	if p.replyLike[id] {
		return ""
	}
	p.replyLike[id] = true
	return id
}

// size picks a user message size for chat c, in encoded bytes as the chat counts them
// (newMessage): mostly small, sometimes at, just under or just over its limit.
func (g *generator) size(c int) int {
	p := g.chats[c]
	switch r := g.rng.IntN(100); {
	case r < 70:
		return 10 + g.rng.IntN(200)
	case r < 80:
		return 4<<10 + g.rng.IntN(12<<10)
	case r < 88:
		return p.limit + 1 + g.rng.IntN(1024) // refused: over the limit
	case r < 90:
		return 2_100_000 + g.rng.IntN(1_000_000) // over Temporal's 2 MB payload limit
	default:
		near := p.limit - g.rng.IntN(512) // at or just under, encoded (newMessage)
		if p.big {
			return near
		}
		return 10 + g.rng.IntN(200)
	}
}

func (g *generator) chatAction(c int) {
	p := g.chats[c]
	r := g.rng.IntN(100)
	switch {
	case r < 40:
		a := Action{Op: opSend, Chat: c, ID: g.userID(c), Size: g.size(c)}
		if g.rng.IntN(100) < 12 {
			a.KillAfter = time.Duration(1+g.rng.IntN(400)) * time.Millisecond
			a.Worker = g.rng.IntN(8)
			a.Variant = g.variant()
		}
		g.add(a)
	case r < 52:
		g.add(Action{Op: opPost, Chat: c, ID: g.userID(c), Size: g.size(c)})
	case r < 58:
		g.add(Action{Op: opBurst, Chat: c, ID: g.nextID(c), Burst: 2 + g.rng.IntN(4)})
	case r < 70:
		if p.approvals {
			g.add(Action{Op: opApprove, Chat: c, Approve: g.rng.IntN(100) < 75})
		} else {
			g.retry(c)
		}
	case r < 76:
		g.retry(c)
	case r < 86:
		if len(g.chats) >= 2*g.initial {
			g.retry(c)
			return
		}
		np := *p
		np.imported, np.turns, np.replyLike = true, 0, nil
		g.chats = append(g.chats, &np)
		switch {
		case r < 80:
			g.add(Action{Op: opExport, Chat: c, Target: len(g.chats) - 1})
			return
		case r < 83:
			g.add(Action{Op: opHandover, Chat: c, ID: g.nextID(c), Burst: 1 + g.rng.IntN(3), Target: len(g.chats) - 1})
			return
		}
		edits := []string{editSystem, editOpenCall, editWrongRole}
		g.add(Action{Op: opEdit, Chat: c, Target: len(g.chats) - 1, Edit: edits[g.rng.IntN(len(edits))]})
	default:
		g.add(Action{Op: opMigrate, Chat: c, NewID: g.rng.IntN(100) < 30})
	}
}

// retry adds a retry of an answered messageId to chat c.
func (g *generator) retry(c int) {
	g.add(Action{Op: opRetry, Chat: c})
}

// variant picks a config for a new worker.
func (g *generator) variant() string {
	vs := []string{variantA, variantB, variantC}
	return vs[g.rng.IntN(len(vs))]
}

func (g *generator) fleet() {
	a := Action{Chat: -1, NS: g.rng.IntN(2), Worker: g.rng.IntN(8), Variant: g.variant()}
	if g.rng.IntN(2) == 0 {
		a.Op = opKill
	} else {
		a.Op = opRestart
	}
	g.add(a)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
