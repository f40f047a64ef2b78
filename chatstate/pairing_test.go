package chatstate

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentchat/agentchat/chat"
)

func ids(ms []chat.Message) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.MessageID
	}
	return strings.Join(s, " ")
}

func TestPairCalls(t *testing.T) {
	user := func(id string) chat.Message { return chat.TextMessage(id, chat.RoleUser, "", "hi") }
	asst := func(id string, cs ...chat.Content) chat.Message {
		return chat.Message{MessageID: id, Role: chat.RoleAssistant, Contents: cs}
	}
	tool := func(id string, cs ...chat.Content) chat.Message {
		return chat.Message{MessageID: id, Role: chat.RoleTool, Contents: cs}
	}
	for _, tt := range []struct {
		name    string
		history []chat.Message
		want    string // ids after repair
		repairs []string
		err     string // Error(), when refused
	}{
		{name: "answered", history: []chat.Message{user("u"), asst("a", call("c1", "f", "{}")), tool("t", result("c1", "ok")), asst("b", chat.Text("done"))},
			want: "u a t b"},
		{name: "two calls answered in any order", history: []chat.Message{asst("a", call("c1", "f", "{}"), call("c2", "f", "{}")), tool("t2", result("c2", "")), tool("t1", result("c1", ""))},
			want: "a t2 t1"},
		{name: "one result in one tool message for two calls", history: []chat.Message{asst("a", call("c1", "f", "{}"), call("c2", "g", "{}")), tool("t", result("c1", ""), result("c2", "")), user("u")},
			want: "a t u"},
		{name: "no tool message: repair right after the call", history: []chat.Message{user("u"), asst("a", call("c1", "f", "{}")), user("v")},
			want:    "u a a/repair-c1 v",
			repairs: []string{`history[1].contents[0].callId: functionCall "c1" had no functionResult; inserted tool message "a/repair-c1" with an error result as history[2]`}},
		{name: "repair after the tool messages that follow", history: []chat.Message{asst("a", call("c1", "f", "{}"), call("c2", "f", "{}")), tool("t1", result("c1", "")), tool("t-text", chat.Text("log")), asst("b", chat.Text("x"))},
			want:    "a t1 t-text a/repair-c2 b",
			repairs: []string{`history[0].contents[1].callId: functionCall "c2" had no functionResult; inserted tool message "a/repair-c2" with an error result as history[3]`}},
		{name: "calls open at the end wait for their results", history: []chat.Message{user("u"), asst("a", call("c1", "f", "{}"), call("c2", "f", "{}"))},
			want: "u a"},
		{name: "an open call at the end after an answered one", history: []chat.Message{user("u"), asst("a", call("c1", "f", "{}"), call("c2", "f", "{}")), tool("t1", result("c1", ""))},
			want: "u a t1"},
		{name: "two repairs in two places", history: []chat.Message{asst("a", call("c1", "f", "{}")), asst("b", call("c2", "f", "{}")), user("u")},
			want: "a a/repair-c1 b b/repair-c2 u",
			repairs: []string{
				`history[0].contents[0].callId: functionCall "c1" had no functionResult; inserted tool message "a/repair-c1" with an error result as history[1]`,
				`history[1].contents[0].callId: functionCall "c2" had no functionResult; inserted tool message "b/repair-c2" with an error result as history[3]`,
			}},
		{name: "orphan result", history: []chat.Message{user("u"), tool("t", result("c9", "x"))},
			err: `chat-state: history[1].contents[0].callId: functionResult "c9" answers no earlier unanswered functionCall; refused, since dropping it would lose data`},
		{name: "second result for one call", history: []chat.Message{asst("a", call("c1", "f", "{}")), tool("t", result("c1", "")), tool("t2", result("c1", ""))},
			err: `chat-state: history[2].contents[0].callId: functionResult "c1" answers no earlier unanswered functionCall; refused, since dropping it would lose data`},
		{name: "duplicate callId", history: []chat.Message{asst("a", call("c1", "f", "{}")), tool("t", result("c1", "")), asst("b", call("c1", "f", "{}"))},
			err: `chat-state: history[2].contents[0].callId: functionCall "c1" has the callId of history[0].contents[0].callId; callIds are unique`},
		{name: "repair id taken", history: []chat.Message{asst("a", call("c1", "f", "{}")), user("a/repair-c1")},
			err: `chat-state: history[0].contents[0].callId: functionCall "c1" has no functionResult and cannot be repaired: message id "a/repair-c1" is taken`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := ids(tt.history)
			got, repairs, err := pairCalls(tt.history)
			if ids(tt.history) != before {
				t.Fatal("pairCalls changed its input")
			}
			if tt.err != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || err.Error() != tt.err {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("history %q, want %q", ids(got), tt.want)
			}
			if strings.Join(repairs, "\n") != strings.Join(tt.repairs, "\n") {
				t.Errorf("repairs\n%s\nwant\n%s", strings.Join(repairs, "\n"), strings.Join(tt.repairs, "\n"))
			}
		})
	}
}

// A repair whose message id is a pending turn's is refused by Encode and Decode alike.
func TestRepairIDOfPendingTurn(t *testing.T) {
	d := goldenDocs()["v1-group-chat.json"]
	d.History = append(d.History[:2], chat.TextMessage("u2", chat.RoleUser, "", "next"))
	d.PendingTurns[0].MessageID = "m-1/1/repair-c1"
	want := `chat-state: pendingTurns[0].messageId: "m-1/1/repair-c1" is also history[2].messageId`
	if _, _, err := Encode(d); err == nil || err.Error() != want {
		t.Errorf("Encode: %v, want %s", err, want)
	}
	if _, _, err := Decode(seal(t, asMap(t, d))); err == nil || err.Error() != want {
		t.Errorf("Decode: %v, want %s", err, want)
	}
}

func TestDecodeDeepNesting(t *testing.T) {
	in := `{"schemaVersion":1,"chatId":` + strings.Repeat("[", 200000)
	_, _, err := Decode([]byte(in))
	var fe *FieldError
	if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "chatId[0][0]") || !strings.HasSuffix(fe.Field, "…") ||
		fe.Problem != "is nested deeper than 10000 levels" {
		t.Errorf("Decode = %v", err)
	}
}
