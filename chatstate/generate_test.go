package chatstate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/agentchat/agentchat/chat"
)

// genWords is the vocabulary of generated text: ASCII prose, JSON-looking and HTML
// characters, escapes RFC 8785 writes in short and long forms (quote, backslash, tab,
// U+0001), characters it writes as UTF-8 (é, combining marks, CJK, emoji, right-to-left
// scripts, U+2028) and a 4-byte character.
var genWords = append(strings.Fields("the order shipped yesterday and should arrive on Tuesday; "+
	`please check whether "priority" is set — café naïve résumé 猫 🐈‍⬛ 𝄞 <b>bold</b> & `+
	`more, summary: totals 42 items at 3.50 each. مرحبا שלום Привет C:\Users\alice `+
	`{"k":[1,2]} Lorem ipsum dolor sit amet`),
	"e\u0301", "tab\there", "\x01ctl", "line\u2028sep", "bell\a", "del\x7f")

// genUsers and genAgents are the people and agents of generated chats.
var (
	genUsers  = []string{"Alice", "Bob", "Chloé", "李雷"}
	genAgents = []Participant{
		{ID: "writer", Name: "Writer", Type: "chat_completion"},
		{ID: "reviewer", Name: "Reviewer", Type: "responses"},
		{ID: "researcher", Name: "Researcher ✓", Type: "assistant"},
		{ID: "planner", Name: "Planner", Type: "chat_completion"},
	}
	genTools = []string{"lookup", "search_orders", "get-weather", "calc_v2"}
)

// generator builds reproducible chat-state documents from a seed (math/rand/v2's PCG,
// whose sequence is fixed across Go releases): the 10,000-message golden file and the
// random documents of the property tests.
type generator struct {
	r      *rand.Rand
	ms     []chat.Message
	minute int
	calls  int
}

// genDocument returns a valid document of n history messages (n ≥ 1): a system message,
// then turns of a user message (text, sometimes an image or a content of an unknown
// type) answered by one to three agents, an agent sometimes calling tools (one to three
// calls, each answered by a tool message, some with an error) before it writes text with
// or without usage, sometimes cut short (incomplete); system notes now and then; the
// last message may be a call awaiting its result. Times are in UTC or +05:30, some with
// nanoseconds, some absent. Channels hold every channel type, pending turns two messages.
func genDocument(seed uint64, n int) Document {
	g := &generator{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	g.history(n)
	id := fmt.Sprintf("gen-%d", seed)
	return Document{
		SchemaVersion: 1, ChatID: id, ExportedAt: time.Date(2026, 12, 1, 9, 30, 0, 123456789, time.UTC),
		Source:       Source{Namespace: "default", WorkflowID: id, RunID: fmt.Sprintf("run-%x", g.r.Uint64()), Cluster: "local"},
		History:      g.ms,
		Participants: genAgents,
		Channels: []Channel{
			{ChannelKey: chat.ChannelKey("chat_history", "reducer=summary"), ChannelType: "chat_history",
				ChannelState: json.RawMessage(fmt.Sprintf(`{"summaryThrough":%s,"summary":%s,"tokens":1.5e3}`, jsonString(g.ms[len(g.ms)/2].MessageID), jsonString(g.text(80))))},
			{ChannelKey: chat.ChannelKey("chat_history", "reducer=none"), ChannelType: "chat_history"},
			{ChannelKey: chat.ChannelKey("responses_thread", "endpoint=https://api.openai.com/v1"), ChannelType: "responses_thread",
				ChannelState: json.RawMessage(fmt.Sprintf(`{"previousResponseId":"resp_%x","syncedThrough":%s}`, g.r.Uint64(), jsonString(g.ms[len(g.ms)-1].MessageID)))},
			{ChannelKey: chat.ChannelKey("assistant_thread", "assistant=asst_1"), ChannelType: "assistant_thread",
				ChannelState: json.RawMessage(`{"threadId":"thread_1","syncedThrough":null,"flags":[true,false],"nested":{"b":2,"a":1}}`)},
			{ChannelKey: chat.ChannelKey("vector_store", "store=vs_9"), ChannelType: "vector_store", ChannelState: json.RawMessage(`{}`)},
		},
		Strategies: Strategies{
			Selection:   Strategy{Type: "roundRobin", State: json.RawMessage(fmt.Sprintf(`{"nextIndex":%d,"order":["writer","reviewer"]}`, g.r.IntN(4)))},
			Termination: Strategy{Type: "maxIterations", State: json.RawMessage(fmt.Sprintf(`{"iterations":%d,"max":100}`, g.r.IntN(100)))},
		},
		PendingTurns: []chat.Message{
			g.message("pending-1", chat.RoleUser, genUsers[0], "", chat.Text(g.text(60))),
			g.message("pending-2", chat.RoleUser, genUsers[1], "", chat.Text(g.text(20)), chat.Content{Type: chat.ContentImage, URI: "https://x/p.png"}),
		},
	}
}

// jsonString returns s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// text returns about n bytes of prose from genWords, sometimes with a newline.
func (g *generator) text(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteString([]string{" ", " ", " ", " ", " ", "\n", ", "}[g.r.IntN(7)])
		}
		b.WriteString(genWords[g.r.IntN(len(genWords))])
	}
	return b.String()
}

// size returns a text length: mostly short, sometimes long.
func (g *generator) size() int {
	if g.r.IntN(10) == 0 {
		return 500 + g.r.IntN(1500)
	}
	return 10 + g.r.IntN(300)
}

// message returns a message created a minute or so after the previous one.
func (g *generator) message(id string, role chat.Role, author, agent string, contents ...chat.Content) chat.Message {
	g.minute += 1 + g.r.IntN(3)
	m := chat.Message{MessageID: id, Role: role, AuthorName: author, AgentID: agent, Contents: contents}
	switch k := g.r.IntN(20); {
	case k == 0: // no time
	case k < 3:
		m.CreatedAt = at(g.minute).Add(time.Duration(g.r.IntN(1e9))).In(time.FixedZone("", 5*3600+1800))
	case k < 6:
		m.CreatedAt = at(g.minute).Add(time.Duration(g.r.IntN(1000)) * time.Millisecond)
	default:
		m.CreatedAt = at(g.minute)
	}
	return m
}

func (g *generator) add(m chat.Message) { g.ms = append(g.ms, m) }

// history appends n messages.
func (g *generator) history(n int) {
	g.add(g.message("sys-0", chat.RoleSystem, "", "", chat.Text("This chat is a generated test: "+g.text(40))))
	for turn := 1; len(g.ms) < n; turn++ {
		id := fmt.Sprintf("m-%d", turn)
		g.add(g.message(id, chat.RoleUser, genUsers[g.r.IntN(len(genUsers))], "", g.userContents()...))
		for reply, replies := 1, 1+g.r.IntN(3); reply <= replies && len(g.ms) < n; reply++ {
			g.reply(id, n)
		}
		if g.r.IntN(25) == 0 && len(g.ms) < n {
			g.add(g.message(fmt.Sprintf("%s/note", id), chat.RoleSystem, "", "", chat.Text(g.text(30))))
		}
	}
}

func (g *generator) userContents() []chat.Content {
	cs := []chat.Content{chat.Text(g.text(g.size()))}
	switch g.r.IntN(30) {
	case 0:
		cs = append(cs, chat.Content{Type: chat.ContentImage, URI: fmt.Sprintf("https://x/img-%d.png", g.r.IntN(1000))})
	case 1:
		cs = append(cs, chat.Content{Type: chat.ContentImage, Data: "iVBORw0KGgoAAAANSUhEUg==", MediaType: "image/png"})
	case 2:
		cs = append(cs, unknown(fmt.Sprintf(`{"type":"audio","uri":"https://x/a-%d.wav","durationMs":%d,"meta":{"lang":"fr","z":null,"a":[1.25,-3e2]}}`, g.r.IntN(1000), g.r.IntN(90000))))
	}
	return cs
}

// reply appends an agent's answer to the turn id: tool calls and their results first,
// sometimes, then a text; it stops at n messages, possibly after an unanswered call.
func (g *generator) reply(id string, n int) {
	agent := genAgents[g.r.IntN(len(genAgents))]
	next := func() string { return fmt.Sprintf("%s/%d", id, len(g.ms)) }
	if g.r.IntN(4) == 0 {
		var calls []chat.Content
		for k := 1 + g.r.IntN(3); k > 0; k-- {
			g.calls++
			calls = append(calls, chat.Content{Type: chat.ContentFunctionCall, CallID: fmt.Sprintf("call_%d", g.calls),
				Name: genTools[g.r.IntN(len(genTools))], Arguments: fmt.Sprintf(`{"q":%s,"limit":%d}`, jsonString(g.text(20)), g.r.IntN(50))})
		}
		if g.r.IntN(3) == 0 {
			calls = append([]chat.Content{chat.Text(g.text(30))}, calls...)
		}
		g.add(g.withUsage(g.message(next(), chat.RoleAssistant, agent.Name, agent.ID, calls...)))
		for _, c := range calls {
			if c.Type != chat.ContentFunctionCall || len(g.ms) >= n {
				continue
			}
			res := chat.Content{Type: chat.ContentFunctionResult, CallID: c.CallID, Result: g.text(g.size())}
			if g.r.IntN(8) == 0 {
				res.Result, res.Error = "", "tool failed: "+g.text(20)
			}
			g.add(g.message(next(), chat.RoleTool, "", "", res))
		}
		if len(g.ms) >= n {
			return
		}
	}
	m := g.withUsage(g.message(next(), chat.RoleAssistant, agent.Name, agent.ID, chat.Text(g.text(g.size()))))
	m.Incomplete = g.r.IntN(40) == 0
	g.add(m)
}

// withUsage gives m a usage most of the time, with or without its optional members.
func (g *generator) withUsage(m chat.Message) chat.Message {
	switch g.r.IntN(4) {
	case 0:
	case 1:
		m.Usage = &chat.Usage{InputTokens: g.r.IntN(5000), OutputTokens: g.r.IntN(800)}
	default:
		in := g.r.IntN(100000)
		m.Usage = &chat.Usage{Model: "gpt-4o-2024-08-06", InputTokens: in, OutputTokens: g.r.IntN(2000), CachedTokens: g.r.IntN(in + 1)}
	}
	return m
}
