package activities

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/offline"
)

// genDocument is a chat-state document with a seeded, mostly careless history: any
// role with any contents (texts, images, unknown types, function calls with good and
// bad names, results of earlier, later or no calls), sealed with a right digest so
// that Decode reaches its rules.
func genDocument(rng *rand.Rand) []byte {
	roles := []chat.Role{chat.RoleSystem, chat.RoleUser, chat.RoleAssistant, chat.RoleTool}
	var h []chat.Message
	var callIDs []string
	// fits are the kinds of content below that each role holds.
	fits := map[chat.Role][]int{chat.RoleSystem: {0}, chat.RoleUser: {0, 1, 2}, chat.RoleAssistant: {0, 3}, chat.RoleTool: {4, 5}}
	for i := range 1 + rng.IntN(10) {
		m := chat.Message{MessageID: fmt.Sprintf("m%d", i), Role: roles[rng.IntN(len(roles))], AuthorName: "Some One"}
		for range 1 + rng.IntN(3) {
			var c chat.Content
			kind := rng.IntN(6)
			if f := fits[m.Role]; rng.IntN(5) > 0 { // mostly what the role holds, so that many documents import
				kind = f[rng.IntN(len(f))]
			}
			switch kind {
			case 0:
				c = chat.Text("words")
			case 1:
				c = chat.Content{Type: chat.ContentImage, URI: "https://example.com/a.png"}
			case 2:
				c = chat.Content{Type: "audio", Raw: json.RawMessage(`{"type":"audio","uri":"https://example.com/a.mp3"}`)}
			case 3:
				id := fmt.Sprintf("c%d", len(callIDs))
				callIDs = append(callIDs, id)
				c = chat.Content{Type: chat.ContentFunctionCall, CallID: id, Name: []string{"lookup", "look up", "refund"}[rng.IntN(3)], Arguments: "{}"}
			default:
				id := fmt.Sprintf("c%d", rng.IntN(len(callIDs)+1))
				c = chat.Content{Type: chat.ContentFunctionResult, CallID: id, Result: "42"}
			}
			m.Contents = append(m.Contents, c)
		}
		h = append(h, m)
	}
	doc := chatstate.Document{SchemaVersion: chatstate.SchemaVersion, ChatID: "c", ExportedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Source: chatstate.Source{Namespace: "default", WorkflowID: "c"}, History: h,
		Participants: []chatstate.Participant{}, Channels: []chatstate.Channel{}, PendingTurns: []chat.Message{},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{}`)}}}
	b, _ := json.Marshal(doc)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	delete(m, "digest")
	plain, _ := json.Marshal(m)
	c, err := jcs.Transform(plain)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(c)
	m["digest"], _ = json.Marshal("sha256:" + hex.EncodeToString(sum[:]))
	out, _ := json.Marshal(m)
	return out
}

// Every document that imports makes model requests OpenAI takes: after the chat
// answers the calls it waits on and a user turn arrives, the Chat Completions request
// of every reducer passes offline.Validate, and the Responses input is answered 200 by
// the strict offline server. Fault 7: import took contents in the wrong role and sent
// them on.
func TestEveryImportedDocumentMakesValidRequests(t *testing.T) {
	model := offline.New(offline.Options{})
	imported := 0
	for seed := range uint64(*requestSeeds * 10) {
		b := genDocument(rand.New(rand.NewPCG(seed, 7)))
		doc, _, err := chatstate.Decode(b)
		if err != nil {
			continue
		}
		imported++
		h := answerOpenCalls(doc.History)
		h = append(h, chat.TextMessage("next", chat.RoleUser, "", "and now?"))
		for _, r := range reducers() {
			if err := offline.Validate(openaiRequest(chatMessages("Be brief.", r.ReduceWith(h, nil)))); err != nil {
				t.Fatalf("seed %d, reducer %+v: %v\ndocument: %s", seed, r, err, b)
			}
		}
		body, _ := json.Marshal(map[string]any{"model": "m", "input": responsesInput("a", h)})
		rec := httptest.NewRecorder()
		model.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(string(body))))
		if rec.Code != http.StatusOK {
			t.Fatalf("seed %d: Responses answered %d: %s\ndocument: %s", seed, rec.Code, rec.Body, b)
		}
	}
	t.Logf("%d of %d documents imported", imported, *requestSeeds*10)
	if imported < *requestSeeds/10 {
		t.Fatalf("only %d documents imported: the generator tests too little", imported)
	}
}

// answerOpenCalls is h with the calls still open at its end answered, as the importing
// chat answers them (approval, or running the tool) before any model call.
func answerOpenCalls(h []chat.Message) []chat.Message {
	answered := map[string]bool{}
	var open []string
	for _, m := range h {
		for _, c := range m.Contents {
			switch c.Type {
			case chat.ContentFunctionCall:
				open = append(open, c.CallID)
			case chat.ContentFunctionResult:
				answered[c.CallID] = true
			}
		}
	}
	tool := chat.Message{MessageID: "answers", Role: chat.RoleTool}
	for _, id := range open {
		if !answered[id] {
			tool.Contents = append(tool.Contents, chat.Content{Type: chat.ContentFunctionResult, CallID: id, Result: "done"})
		}
	}
	if len(tool.Contents) == 0 {
		return h
	}
	return append(h, tool)
}
