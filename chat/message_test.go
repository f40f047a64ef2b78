package chat

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMessageMarshalJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   Message
		want string
	}{
		{"optional fields omitted",
			Message{MessageID: "m-1", Role: RoleUser, Contents: []Content{Text("hi")}},
			`{"messageId":"m-1","role":"user","contents":[{"type":"text","text":"hi"}]}`},
		{"all fields",
			Message{MessageID: "m-2", Role: RoleAssistant, AuthorName: "Writer", AgentID: "writer", CreatedAt: at,
				Contents: []Content{{Type: ContentFunctionCall, CallID: "c1", Name: "lookup", Arguments: `{"q":"x"}`}}},
			`{"messageId":"m-2","role":"assistant","authorName":"Writer","agentId":"writer","createdAt":"2026-11-30T12:00:00Z",` +
				`"contents":[{"type":"functionCall","callId":"c1","name":"lookup","arguments":"{\"q\":\"x\"}"}]}`},
		{"createdAt keeps its offset and fraction",
			Message{MessageID: "m-3", Role: RoleTool,
				CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6000000, time.FixedZone("CEST", 2*3600)),
				Contents:  []Content{{Type: ContentFunctionResult, CallID: "c1"}}},
			`{"messageId":"m-3","role":"tool","createdAt":"2026-01-02T03:04:05.006+02:00",` +
				`"contents":[{"type":"functionResult","callId":"c1","result":""}]}`},
		{"TextMessage without author",
			TextMessage("m-4", RoleSystem, "", "be brief"),
			`{"messageId":"m-4","role":"system","contents":[{"type":"text","text":"be brief"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal =\n %s\nwant\n %s", got, tt.want)
			}
			assertCamelNoNulls(t, got)

			var fields map[string]json.RawMessage
			if err := json.Unmarshal(got, &fields); err != nil {
				t.Fatal(err)
			}
			if raw, ok := fields["createdAt"]; ok {
				var s string
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatalf("createdAt %s is not a string: %v", raw, err)
				}
				parsed, err := time.Parse(time.RFC3339, s)
				if err != nil {
					t.Errorf("createdAt %q is not RFC 3339: %v", s, err)
				} else if !parsed.Equal(tt.in.CreatedAt) {
					t.Errorf("createdAt %q = %v, want %v", s, parsed, tt.in.CreatedAt)
				}
			}

			var back Message
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !back.CreatedAt.Equal(tt.in.CreatedAt) {
				t.Errorf("createdAt after round trip = %v, want %v", back.CreatedAt, tt.in.CreatedAt)
			}
			back.CreatedAt, tt.in.CreatedAt = time.Time{}, time.Time{}
			if !reflect.DeepEqual(back, tt.in) {
				t.Errorf("round trip = %#v, want %#v", back, tt.in)
			}
		})
	}
}

func TestMessageUnmarshalJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"content without type", `{"messageId":"m","role":"user","contents":[{"text":"hi"}]}`},
		{"createdAt not RFC 3339", `{"messageId":"m","role":"user","createdAt":"30/11/2026","contents":[]}`},
		{"contents not an array", `{"messageId":"m","role":"user","contents":{"type":"text"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Message
			if err := json.Unmarshal([]byte(tt.in), &m); err == nil {
				t.Errorf("Unmarshal(%s) = %#v, want an error", tt.in, m)
			}
		})
	}
}

func TestMessageValidate(t *testing.T) {
	ok := func(cs ...Content) Message { return Message{MessageID: "m-1", Role: RoleUser, Contents: cs} }
	sentinels := []error{ErrNoMessageID, ErrInvalidRole, ErrEmptyMessage, ErrInvalidContent}
	tests := []struct {
		name    string
		in      Message
		want    error  // nil: valid
		mention string // a substring the error must contain
	}{
		{"text", ok(Text("hi")), nil, ""},
		{"every role", Message{MessageID: "m", Role: RoleSystem, Contents: []Content{Text("x")}}, nil, ""},
		{"image uri", ok(Content{Type: ContentImage, URI: "https://x/y.png"}), nil, ""},
		{"image data", ok(Content{Type: ContentImage, Data: "aGk=", MediaType: "image/png"}), nil, ""},
		{"functionCall", ok(Content{Type: ContentFunctionCall, CallID: "c", Name: "f"}), nil, ""},
		{"functionResult with empty result", ok(Content{Type: ContentFunctionResult, CallID: "c"}), nil, ""},
		{"unknown content accepted", ok(Content{Type: "audio", Raw: json.RawMessage(`{"type":"audio"}`)}), nil, ""},

		{"no messageId", Message{Role: RoleUser, Contents: []Content{Text("hi")}}, ErrNoMessageID, ""},
		{"no role", Message{MessageID: "m", Contents: []Content{Text("hi")}}, ErrInvalidRole, `""`},
		{"unknown role", Message{MessageID: "m", Role: "bot", Contents: []Content{Text("hi")}}, ErrInvalidRole, `"bot"`},
		{"role is case-sensitive", Message{MessageID: "m", Role: "User", Contents: []Content{Text("hi")}}, ErrInvalidRole, `"User"`},
		{"nil contents", Message{MessageID: "m", Role: RoleUser}, ErrEmptyMessage, ""},
		{"empty contents", ok(), ErrEmptyMessage, ""},
		{"empty text", ok(Text("")), ErrEmptyMessage, "message has no content: its text is blank"},
		{"blank text", ok(Text(" \t\r\n ")), ErrEmptyMessage, "message has no content: its text is blank"},
		{"blank second text", ok(Text("hi"), Text("  ")), ErrEmptyMessage, "contents[1]: text is blank"},
		{"image without uri or data", ok(Content{Type: ContentImage}), ErrInvalidContent, "contents[0]"},
		{"image data without mediaType", ok(Content{Type: ContentImage, Data: "aGk="}), ErrInvalidContent, "image"},
		{"functionCall without callId", ok(Content{Type: ContentFunctionCall, Name: "f"}), ErrInvalidContent, "functionCall"},
		{"functionCall without name", ok(Content{Type: ContentFunctionCall, CallID: "c"}), ErrInvalidContent, "functionCall"},
		{"functionResult without callId", ok(Text("x"), Content{Type: ContentFunctionResult, Result: "r"}), ErrInvalidContent, "contents[1]"},
		{"content without type", ok(Content{Text: "hi"}), ErrInvalidContent, "type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.in.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %v", tt.want)
			}
			for _, s := range sentinels {
				if got, want := errors.Is(err, s), s == tt.want; got != want {
					t.Errorf("errors.Is(%q, %q) = %v, want %v", err, s, got, want)
				}
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("Validate() = %q, want it to mention %q", err, tt.mention)
			}
		})
	}
}

func TestMessageText(t *testing.T) {
	call := Content{Type: ContentFunctionCall, CallID: "c", Name: "f"}
	img := Content{Type: ContentImage, URI: "u"}
	unknown := Content{Type: "audio", Raw: json.RawMessage(`{"type":"audio","text":"not me"}`)}
	tests := []struct {
		name string
		in   []Content
		want string
	}{
		{"no contents", nil, ""},
		{"no text contents", []Content{call, img}, ""},
		{"one text", []Content{Text("hello")}, "hello"},
		{"texts joined by newline", []Content{Text("a"), Text("b"), Text("c")}, "a\nb\nc"},
		{"other contents skipped", []Content{img, Text("a"), call, unknown, Text("b")}, "a\nb"},
		{"empty text kept as a line", []Content{Text(""), Text("b")}, "\nb"},
		{"text field of a non-text content ignored", []Content{{Type: ContentImage, URI: "u", Text: "alt"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Message{Contents: tt.in}).Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMessageFunctionCalls(t *testing.T) {
	c1 := Content{Type: ContentFunctionCall, CallID: "c1", Name: "f"}
	c2 := Content{Type: ContentFunctionCall, CallID: "c2", Name: "g"}
	m := Message{Contents: []Content{Text("x"), c1, {Type: ContentFunctionResult, CallID: "c1"}, c2}}
	if got, want := m.FunctionCalls(), []Content{c1, c2}; !reflect.DeepEqual(got, want) {
		t.Errorf("FunctionCalls() = %#v, want %#v", got, want)
	}
	if got := (Message{Contents: []Content{Text("x")}}).FunctionCalls(); len(got) != 0 {
		t.Errorf("FunctionCalls() of a text message = %#v, want none", got)
	}
}

func TestMessageSizeGrows(t *testing.T) {
	base := Message{MessageID: "m-1", Role: RoleUser, Contents: []Content{Text("hello")}}
	with := func(f func(*Message)) Message {
		m := base
		m.Contents = append([]Content(nil), base.Contents...)
		f(&m)
		return m
	}
	tests := []struct {
		name   string
		larger Message
		grow   int // the exact growth in bytes; 0 means only "larger"
	}{
		{"longer text", with(func(m *Message) { m.Contents[0].Text += " world" }), len(" world")},
		{"second text", with(func(m *Message) { m.Contents = append(m.Contents, Text("again")) }), len("text") + len("again")},
		{"function call", with(func(m *Message) {
			m.Contents = append(m.Contents, Content{Type: ContentFunctionCall, CallID: "c1", Name: "f", Arguments: `{"q":"xyz"}`})
		}), 0},
		{"image data", with(func(m *Message) {
			m.Contents = append(m.Contents, Content{Type: ContentImage, Data: strings.Repeat("A", 4096), MediaType: "image/png"})
		}), 0},
		{"unknown content counts its raw bytes", with(func(m *Message) {
			m.Contents = append(m.Contents, Content{Type: "audio", Raw: json.RawMessage(`{"type":"audio","uri":"x"}`)})
		}), len(`{"type":"audio","uri":"x"}`)},
		{"author and agent", with(func(m *Message) { m.AuthorName, m.AgentID = "Writer", "writer" }), len("Writer") + len("writer")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			small, large := base.Size(), tt.larger.Size()
			if large <= small {
				t.Errorf("Size() = %d, want more than %d", large, small)
			}
			if tt.grow > 0 && large-small != tt.grow {
				t.Errorf("Size() grew by %d, want %d", large-small, tt.grow)
			}
		})
	}
	if n := (Message{}).Size(); n != 0 {
		t.Errorf("Size() of an empty message = %d, want 0", n)
	}
}

func TestRoleValid(t *testing.T) {
	for _, r := range []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool} {
		if !r.Valid() {
			t.Errorf("%q.Valid() = false", r)
		}
	}
	for _, r := range []Role{"", "developer", "USER", "function"} {
		if r.Valid() {
			t.Errorf("%q.Valid() = true", r)
		}
	}
}
