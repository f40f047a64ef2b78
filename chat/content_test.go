package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// camelKey is the shape of every field name chat-state-v1.md allows.
var camelKey = regexp.MustCompile(`^[a-z][a-zA-Z]*$`)

// assertCamelNoNulls fails when a JSON object has a field that is null or not camelCase.
func assertCamelNoNulls(t *testing.T, b []byte) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("output %s is not a JSON object: %v", b, err)
	}
	for k, v := range m {
		if !camelKey.MatchString(k) {
			t.Errorf("field %q of %s is not camelCase", k, b)
		}
		if v == nil {
			t.Errorf("field %q of %s is null", k, b)
		}
	}
}

func TestContentMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		in   Content
		want string
	}{
		{"text", Text("hi"), `{"type":"text","text":"hi"}`},
		{"empty text keeps text", Text(""), `{"type":"text","text":""}`},
		{"text drops other types' fields",
			Content{Type: ContentText, Text: "hi", URI: "u", CallID: "c", Arguments: "{}", Result: "r", Error: "e"},
			`{"type":"text","text":"hi"}`},
		{"image uri", Content{Type: ContentImage, URI: "https://x/y.png"}, `{"type":"image","uri":"https://x/y.png"}`},
		{"image data", Content{Type: ContentImage, Data: "aGk=", MediaType: "image/png"},
			`{"type":"image","data":"aGk=","mediaType":"image/png"}`},
		{"image drops text and call fields", Content{Type: ContentImage, URI: "u", Text: "t", Name: "n", Result: "r"},
			`{"type":"image","uri":"u"}`},
		{"functionCall", Content{Type: ContentFunctionCall, CallID: "c1", Name: "lookup", Arguments: `{"q":"x"}`},
			`{"type":"functionCall","callId":"c1","name":"lookup","arguments":"{\"q\":\"x\"}"}`},
		{"functionCall empty arguments", Content{Type: ContentFunctionCall, CallID: "c1", Name: "now"},
			`{"type":"functionCall","callId":"c1","name":"now","arguments":""}`},
		{"functionCall drops result and text", Content{Type: ContentFunctionCall, CallID: "c", Name: "n", Arguments: "{}", Result: "r", Text: "t", Error: "e"},
			`{"type":"functionCall","callId":"c","name":"n","arguments":"{}"}`},
		{"functionResult", Content{Type: ContentFunctionResult, CallID: "c1", Result: "42"},
			`{"type":"functionResult","callId":"c1","result":"42"}`},
		{"functionResult empty result", Content{Type: ContentFunctionResult, CallID: "c1"},
			`{"type":"functionResult","callId":"c1","result":""}`},
		{"functionResult with error", Content{Type: ContentFunctionResult, CallID: "c1", Error: "boom"},
			`{"type":"functionResult","callId":"c1","result":"","error":"boom"}`},
		{"functionResult drops name and arguments", Content{Type: ContentFunctionResult, CallID: "c1", Result: "ok", Name: "n", Arguments: "{}"},
			`{"type":"functionResult","callId":"c1","result":"ok"}`},
		{"unknown type written from raw", Content{Type: "audio", Raw: json.RawMessage(`{"type":"audio","uri":"x"}`)},
			`{"type":"audio","uri":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal = %s, want %s", got, tt.want)
			}
			assertCamelNoNulls(t, got)
		})
	}
}

func TestContentMarshalJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		in   Content
	}{
		{"unknown type without raw", Content{Type: "audio", URI: "x"}},
		{"no type", Content{Text: "hi"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, err := json.Marshal(tt.in); err == nil {
				t.Errorf("Marshal = %s, want an error", b)
			}
		})
	}
}

func TestContentUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Content
	}{
		{"text", `{"type":"text","text":"hi"}`, Text("hi")},
		{"text without text field", `{"type":"text"}`, Text("")},
		{"text null text", `{"type":"text","text":null}`, Text("")},
		{"text with surrounding space", " \n{\"type\":\"text\",\"text\":\"hi\"}\t", Text("hi")},
		{"image uri", `{"type":"image","uri":"https://x/y.png"}`, Content{Type: ContentImage, URI: "https://x/y.png"}},
		{"image data", `{"type":"image","data":"aGk=","mediaType":"image/png"}`,
			Content{Type: ContentImage, Data: "aGk=", MediaType: "image/png"}},
		{"functionCall", `{"type":"functionCall","callId":"c1","name":"lookup","arguments":"{\"q\":\"x\"}"}`,
			Content{Type: ContentFunctionCall, CallID: "c1", Name: "lookup", Arguments: `{"q":"x"}`}},
		{"functionResult with error", `{"type":"functionResult","callId":"c1","result":"","error":"boom"}`,
			Content{Type: ContentFunctionResult, CallID: "c1", Error: "boom"}},
		{"known type ignores unknown fields", `{"type":"text","text":"hi","extra":{"k":1}}`, Text("hi")},
		{"unknown type keeps raw", `{"type":"audio","uri":"x","extra":{"k":[1,2]}}`,
			Content{Type: "audio", Raw: json.RawMessage(`{"type":"audio","uri":"x","extra":{"k":[1,2]}}`)}},
		{"unknown type raw is trimmed", "  {\"type\":\"video\"}\n",
			Content{Type: "video", Raw: json.RawMessage(`{"type":"video"}`)}},
		{"unknown type whose fields clash with known field types",
			`{"type":"audio","text":{"lang":"en"},"data":[1,2],"result":7,"arguments":null}`,
			Content{Type: "audio", Raw: json.RawMessage(`{"type":"audio","text":{"lang":"en"},"data":[1,2],"result":7,"arguments":null}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Content
			if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unmarshal(%s) = %#v, want %#v", tt.in, got, tt.want)
			}
			if got.Known() != (tt.want.Raw == nil) {
				t.Errorf("Known() = %v for type %q", got.Known(), got.Type)
			}
		})
	}
}

func TestContentUnmarshalJSONErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		errNoTy bool // the error is the "no type" error
	}{
		{"empty object", `{}`, true},
		{"no type field", `{"text":"hi"}`, true},
		{"empty type", `{"type":"","text":"hi"}`, true},
		{"null type", `{"type":null,"text":"hi"}`, true},
		{"null", `null`, true},
		{"numeric type", `{"type":5}`, false},
		{"array", `[{"type":"text"}]`, false},
		{"string", `"text"`, false},
		{"known type with wrong field type", `{"type":"text","text":5}`, false},
		{"functionCall with object arguments", `{"type":"functionCall","callId":"c","name":"n","arguments":{"q":1}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Content
			err := json.Unmarshal([]byte(tt.in), &c)
			if err == nil {
				t.Fatalf("Unmarshal(%s) = %#v, want an error", tt.in, c)
			}
			if got := errors.Is(err, errNoType); got != tt.errNoTy {
				t.Errorf("errors.Is(%v, errNoType) = %v, want %v", err, got, tt.errNoTy)
			}
		})
	}
}

// Unknown content types are kept byte-for-byte (chat-state-v1.md), alone and inside a
// message, through a decode and an encode.
func TestUnknownContentRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		raw  string
	}{
		{"audio", `{"type":"audio","uri":"x","extra":{"k":[1,2]}}`},
		{"field order and numbers kept", `{"z":1.50,"type":"x-custom","a":1e3,"n":null,"b":[true,false]}`},
		{"clashing field types", `{"type":"audio","text":{"lang":"en"},"callId":1}`},
		{"unicode", `{"type":"note","text":"héllo \u00e9 ✓"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Content
			if err := json.Unmarshal([]byte(tt.raw), &c); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			got, err := json.Marshal(c)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.raw {
				t.Errorf("content round trip:\n got %s\nwant %s", got, tt.raw)
			}

			msg := `{"messageId":"m-1","role":"assistant","agentId":"writer","contents":[{"type":"text","text":"see"},` +
				tt.raw + `,{"type":"functionCall","callId":"c1","name":"f","arguments":"{}"}]}`
			var m Message
			if err := json.Unmarshal([]byte(msg), &m); err != nil {
				t.Fatalf("Unmarshal message: %v", err)
			}
			if len(m.Contents) != 3 || m.Contents[1].Known() {
				t.Fatalf("contents = %#v, want 3 with the unknown one in the middle", m.Contents)
			}
			got, err = json.Marshal(m)
			if err != nil {
				t.Fatalf("Marshal message: %v", err)
			}
			if string(got) != msg {
				t.Errorf("message round trip:\n got %s\nwant %s", got, msg)
			}
		})
	}
}

// encoding/json's Marshal HTML-escapes <, > and & even in a Marshaler's output; a writer
// that must keep unknown contents byte-for-byte uses an Encoder without HTML escaping.
// MarshalJSON itself always returns the raw bytes.
func TestUnknownContentHTMLCharacters(t *testing.T) {
	raw := `{"type":"html","body":"<b>a & b</b>"}`
	var c Content
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	direct, err := c.MarshalJSON()
	if err != nil || string(direct) != raw {
		t.Errorf("MarshalJSON = %s, %v; want %s", direct, err, raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if got := strings.TrimSuffix(buf.String(), "\n"); got != raw {
		t.Errorf("Encoder without HTML escaping = %s, want %s", got, raw)
	}
	// json.Marshal escapes; the result is equivalent JSON and stable from then on.
	escaped, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var again Content
	if err := json.Unmarshal(escaped, &again); err != nil {
		t.Fatalf("Unmarshal escaped: %v", err)
	}
	if b, _ := json.Marshal(again); !bytes.Equal(b, escaped) {
		t.Errorf("escaped output is not stable: %s then %s", escaped, b)
	}
}

func TestContentKnown(t *testing.T) {
	tests := []struct {
		typ  string
		want bool
	}{
		{ContentText, true}, {ContentImage, true}, {ContentFunctionCall, true}, {ContentFunctionResult, true},
		{"", false}, {"Text", false}, {"audio", false}, {"function_call", false},
	}
	for _, tt := range tests {
		if got := (Content{Type: tt.typ}).Known(); got != tt.want {
			t.Errorf("Content{Type: %q}.Known() = %v, want %v", tt.typ, got, tt.want)
		}
	}
}
