package chatstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/agentchat/agentchat/chat"
)

// at returns a fixed time n minutes after 2026-11-30T12:00:00Z.
func at(n int) time.Time {
	return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute)
}

var (
	chatHistoryKey = chat.ChannelKey("chat_history", "reducer=none")
	responsesKey   = chat.ChannelKey("responses_thread", "reducer=none", "endpoint=https://api.openai.com/v1")
)

func msg(id string, role chat.Role, author, agent string, minute int, contents ...chat.Content) chat.Message {
	return chat.Message{MessageID: id, Role: role, AuthorName: author, AgentID: agent, CreatedAt: at(minute), Contents: contents}
}

func call(id, name, args string) chat.Content {
	return chat.Content{Type: chat.ContentFunctionCall, CallID: id, Name: name, Arguments: args}
}

func result(id, res string) chat.Content {
	return chat.Content{Type: chat.ContentFunctionResult, CallID: id, Result: res}
}

// unknown returns a content of a type this reader does not know, as read from raw.
func unknown(raw string) chat.Content {
	var c chat.Content
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		panic(err)
	}
	return c
}

// goldenDocs are the documents of testdata/golden, by file name.
func goldenDocs() map[string]Document {
	docs := map[string]Document{
		"v1-thread.json": {
			SchemaVersion: 1, ChatID: "thread-1", ExportedAt: at(10),
			Source: Source{Namespace: "default", WorkflowID: "thread-1", RunID: "run-1", Cluster: "local"},
			History: []chat.Message{
				msg("m-1", chat.RoleUser, "Alice", "", 1, chat.Text("Hello")),
				msg("m-1/1", chat.RoleAssistant, "Assistant", "assistant", 2, chat.Text("Hello! How can I help you today?")),
				msg("m-2", chat.RoleUser, "Alice", "", 3, chat.Text("My name is Alice")),
				msg("m-2/1", chat.RoleAssistant, "Assistant", "assistant", 4, chat.Text("Nice to meet you, Alice.")),
				msg("m-3", chat.RoleUser, "Alice", "", 5, chat.Text("What's my name?")),
				msg("m-3/1", chat.RoleAssistant, "Assistant", "assistant", 6, chat.Text("Your name is Alice.")),
			},
			Participants: []Participant{{ID: "assistant", Name: "Assistant", Type: "chat_completion"}},
			Channels:     []Channel{{ChannelKey: chatHistoryKey, ChannelType: "chat_history", ChannelState: json.RawMessage(`{}`)}},
			Strategies: Strategies{
				Selection:   Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
				Termination: Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":0}`)},
			},
			PendingTurns: []chat.Message{},
		},
		"v1-group-chat.json": {
			SchemaVersion: 1, ChatID: "support-42", ExportedAt: at(30),
			Source: Source{Namespace: "default", WorkflowID: "support-42", RunID: "0b7e4c1a-run", Cluster: "local"},
			History: []chat.Message{
				msg("m-1", chat.RoleUser, "Alice", "", 1, chat.Text("My name is Alice. Find the order status of order 7 & summarize it <briefly>.")),
				msg("m-1/1", chat.RoleAssistant, "Writer", "writer", 2, call("c1", "lookup", `{"order":7}`)),
				msg("m-1/2", chat.RoleTool, "", "", 3, result("c1", `{"status":"shipped","eta":"2026-12-02"}`)),
				msg("m-1/3", chat.RoleAssistant, "Writer", "writer", 4, chat.Text("Order 7 has shipped; it should arrive on 2 December.")),
				msg("m-1/4", chat.RoleAssistant, "Reviewer", "reviewer", 5, chat.Text("Approved.\nThe summary is accurate.")),
			},
			Participants: []Participant{
				{ID: "writer", Name: "Writer", Type: "chat_completion"},
				{ID: "reviewer", Name: "Reviewer", Type: "responses"},
			},
			Channels: []Channel{
				{ChannelKey: chatHistoryKey, ChannelType: "chat_history", ChannelState: json.RawMessage(`{}`)},
				{ChannelKey: responsesKey, ChannelType: "responses_thread", ChannelState: json.RawMessage(`{"previousResponseId":"resp_1","syncedThrough":"m-2"}`)},
			},
			Strategies: Strategies{
				Selection:   Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":1}`)},
				Termination: Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":2}`)},
				IsComplete:  false,
			},
			PendingTurns: []chat.Message{
				msg("m-2", chat.RoleUser, "Alice", "", 6, chat.Text("Thanks! Can you also check order 8?")),
			},
		},
		"v1-contents.json": {
			SchemaVersion: 1, ChatID: "media-7", ExportedAt: at(20),
			Source: Source{Namespace: "prod", WorkflowID: "media-7"},
			History: []chat.Message{
				msg("m-1", chat.RoleUser, "Bob", "", 1,
					chat.Text("What is in this picture, and what does the recording say?"),
					chat.Content{Type: chat.ContentImage, URI: "https://x/cat.png"},
					unknown(`{"type":"audio","uri":"https://x/a.wav","durationMs":1200}`)),
				msg("m-1/1", chat.RoleAssistant, "Describer", "describer", 2, chat.Text("A cat; the recording says \"miaow\".")),
				msg("m-2", chat.RoleUser, "Bob", "", 3,
					chat.Content{Type: chat.ContentImage, Data: "iVBORw0KGgo=", MediaType: "image/png"},
					unknown(`{"type":"video","text":{"lang":"en","lines":["héllo","wörld ✓"]},"frames":[1,2.5,-3e2]}`)),
				msg("m-2/1", chat.RoleAssistant, "Describer", "describer", 4, chat.Text("The same cat, smaller.")),
			},
			Participants: []Participant{{ID: "describer", Name: "Describer", Type: "chat_completion"}},
			Channels:     []Channel{{ChannelKey: chatHistoryKey, ChannelType: "chat_history", ChannelState: json.RawMessage(`{"summary":"A user shares a cat.","summaryThrough":"m-1/1"}`)}},
			Strategies: Strategies{
				Selection:   Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
				Termination: Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":1}`)},
				IsComplete:  true,
			},
			PendingTurns: []chat.Message{},
		},
		"v1-empty.json": {
			SchemaVersion: 1, ChatID: "empty", ExportedAt: at(0),
			Source:     Source{Namespace: "default", WorkflowID: "empty"},
			Strategies: Strategies{Selection: Strategy{Type: "sequential"}, Termination: Strategy{Type: "maxIterations"}},
		},
	}
	docs["v1-usage.json"] = usageDoc(docs["v1-thread.json"])
	return docs
}

// reference is the canonical form of d without digest computed the slow, obvious way:
// encoding/json, then jcs.Transform. d must have no nil slices or empty states.
func reference(t testing.TB, d Document) []byte {
	t.Helper()
	d.Digest = ""
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	c, err := jcs.Transform(b)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	return c
}

// withoutDigest removes the digest member from a canonical document.
func withoutDigest(t testing.TB, canonical []byte) []byte {
	t.Helper()
	i := bytes.Index(canonical, []byte(`"digest":"sha256:`))
	if i < 0 {
		t.Fatalf("no digest in %.200s", canonical)
	}
	end := i + len(`"digest":"sha256:`) + 64 + len(`",`)
	return append(append([]byte{}, canonical[:i]...), canonical[end:]...)
}

// seal returns the JSON of v (any JSON object) with its digest set by the rule of
// chat-state-v1.md, computed with jcs directly, in encoding/json's (not canonical) form.
func seal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "digest")
	plain, _ := json.Marshal(m)
	c, err := jcs.Transform(plain)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c)
	m["digest"], _ = json.Marshal("sha256:" + hex.EncodeToString(sum[:]))
	out, _ := json.MarshalIndent(m, "", "  ")
	return out
}

// asMap returns d as a generic JSON object, to be edited and sealed.
func asMap(t testing.TB, d Document) map[string]any {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "digest")
	return m
}

// path walks a generic JSON value: keys for objects, ints for arrays.
func path(v any, steps ...any) any {
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// sameDocument compares two documents, times by instant and offset.
func sameDocument(t testing.TB, got, want Document) {
	t.Helper()
	if !reflect.DeepEqual(normalizeTimes(got), normalizeTimes(want)) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("documents differ:\n got %.2000s\nwant %.2000s", g, w)
	}
}

func normalizeTimes(d Document) Document {
	utc := func(t time.Time) time.Time {
		_, off := t.Zone()
		return t.UTC().Add(time.Duration(off) * time.Second) // keeps the offset visible
	}
	fix := func(ms []chat.Message) []chat.Message {
		out := make([]chat.Message, len(ms))
		for i, m := range ms {
			m.CreatedAt = utc(m.CreatedAt)
			out[i] = m
		}
		return out
	}
	d.ExportedAt = utc(d.ExportedAt)
	d.History, d.PendingTurns = fix(d.History), fix(d.PendingTurns)
	return d
}

// usageDoc is a thread whose assistant messages record their usage: all members, and
// the optional ones absent.
func usageDoc(d Document) Document {
	d.ChatID, d.Source.WorkflowID = "usage-1", "usage-1"
	d.History = append([]chat.Message(nil), d.History...)
	d.History[1].Usage = &chat.Usage{Model: "gpt-4o-2024-08-06", InputTokens: 1200, OutputTokens: 9, CachedTokens: 1024}
	d.History[3].Usage = &chat.Usage{Model: "gpt-4o-2024-08-06", InputTokens: 31, OutputTokens: 7}
	d.History[5].Usage = &chat.Usage{InputTokens: 0, OutputTokens: 0}
	return d
}
