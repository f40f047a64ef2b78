package chatstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/chat"
)

func TestEncodeNilSlicesAndStates(t *testing.T) {
	d := Document{
		SchemaVersion: 1, ChatID: "c", ExportedAt: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC),
		Source:     Source{Namespace: "ns", WorkflowID: "c"},
		Strategies: Strategies{Selection: Strategy{Type: "sequential"}, Termination: Strategy{Type: "maxIterations"}},
	}
	body := `{"channels":[],"chatId":"c","exportedAt":"2026-01-02T03:04:05.0000006Z","history":[],"participants":[],"pendingTurns":[],"schemaVersion":1,"source":{"namespace":"ns","workflowId":"c"},"strategies":{"isComplete":false,"selection":{"state":{},"type":"sequential"},"termination":{"state":{},"type":"maxIterations"}}}`
	sum := sha256.Sum256([]byte(body))
	wantDigest := "sha256:" + hex.EncodeToString(sum[:])
	want := strings.Replace(body, `"exportedAt"`, `"digest":"`+wantDigest+`","exportedAt"`, 1)

	got, digest, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want || digest != wantDigest {
		t.Errorf("Encode =\n%s %s\nwant\n%s %s", got, digest, want, wantDigest)
	}
	if d2, err := Digest(d); err != nil || d2 != wantDigest {
		t.Errorf("Digest = %q, %v; want %q", d2, err, wantDigest)
	}
	d.Digest = "sha256:ignored"
	if d2, _ := Digest(d); d2 != wantDigest {
		t.Errorf("Digest depends on d.Digest: %q", d2)
	}
}

// TestEncodeMatchesReference checks the package's encoder against encoding/json then
// jcs.Transform, on the golden documents and on strings that need escaping.
func TestEncodeMatchesReference(t *testing.T) {
	docs := goldenDocs()
	tricky := docs["v1-thread.json"]
	tricky.History = append([]chat.Message(nil), tricky.History...)
	for i, s := range []string{
		"quote \" backslash \\ slash / tab \t cr \r lf \n bs \b ff \f nul \x00 unit \x1f del \x7f",
		"html <a href='x'>&amp;</a> line sep \u2028 para sep \u2029 bom \ufeff",
		"invalid utf-8 \xff\xfe and \xed\xa0\x80 surrogate, emoji 🐈‍⬛, CJK 猫, combining é",
		"\U0010FFFF max, \u00e9\u0301",
	} {
		tricky.History = append(tricky.History, chat.TextMessage("t-"+string(rune('a'+i)), chat.RoleUser, s, s))
	}
	tricky.Source.Cluster = "\x01cluster\u2028"
	docs["tricky"] = tricky
	for name, d := range docs {
		d = normalizeEmpty(d)
		enc, _, err := Encode(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := withoutDigest(t, enc), reference(t, d); !bytes.Equal(got, want) {
			t.Errorf("%s: encoder differs from reference\n got %q\nwant %q", name, got, want)
		}
	}
}

// normalizeEmpty gives d the empty slices and states Encode writes for nil ones, so that
// encoding/json writes the same.
func normalizeEmpty(d Document) Document {
	empty := func(ms []chat.Message) []chat.Message {
		if ms == nil {
			return []chat.Message{}
		}
		return ms
	}
	obj := func(r json.RawMessage) json.RawMessage {
		if len(r) == 0 {
			return json.RawMessage(`{}`)
		}
		return r
	}
	d.History, d.PendingTurns = empty(d.History), empty(d.PendingTurns)
	if d.Participants == nil {
		d.Participants = []Participant{}
	}
	if d.Channels == nil {
		d.Channels = []Channel{}
	}
	d.Channels = append(make([]Channel, 0, len(d.Channels)), d.Channels...)
	for i := range d.Channels {
		d.Channels[i].ChannelState = obj(d.Channels[i].ChannelState)
	}
	d.Strategies.Selection.State = obj(d.Strategies.Selection.State)
	d.Strategies.Termination.State = obj(d.Strategies.Termination.State)
	return d
}

// TestDigestIgnoresLayout: the digest is that of the content, whatever the member order
// and whitespace of the file.
func TestDigestIgnoresLayout(t *testing.T) {
	names, files := goldenFiles(t)
	for _, name := range names {
		b := files[name]
		var indented bytes.Buffer
		if err := json.Indent(&indented, b, "\t", "   "); err != nil {
			t.Fatal(err)
		}
		reordered := seal(t, mustMap(t, b)) // encoding/json order and indentation
		for layout, in := range map[string][]byte{"indented": indented.Bytes(), "reordered": reordered} {
			doc, _, err := Decode(in)
			if err != nil {
				t.Fatalf("%s %s: Decode: %v", name, layout, err)
			}
			want := fileDigest(t, b)
			if got, _ := Digest(doc); got != want || doc.Digest != want {
				t.Errorf("%s %s: digest %s (Decode %s), want %s", name, layout, got, doc.Digest, want)
			}
			if enc, _, _ := Encode(doc); !bytes.Equal(enc, b) {
				t.Errorf("%s %s: not re-encoded to the golden bytes", name, layout)
			}
		}
	}
}

func mustMap(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func fileDigest(t testing.TB, b []byte) string {
	t.Helper()
	return mustMap(t, b)["digest"].(string)
}

// TestDigestChangesWithAnyText changes the text of each message in turn.
func TestDigestChangesWithAnyText(t *testing.T) {
	d := goldenDocs()["v1-group-chat.json"]
	base, err := Digest(d)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{base: true}
	edit := func(ms []chat.Message, i int) []chat.Message {
		out := append([]chat.Message(nil), ms...)
		out[i].Contents = append([]chat.Content(nil), out[i].Contents...)
		c := &out[i].Contents[0]
		switch c.Type {
		case chat.ContentText:
			c.Text += "."
		case chat.ContentFunctionCall:
			c.Arguments = `{"order":8}`
		case chat.ContentFunctionResult:
			c.Result += " "
		}
		return out
	}
	for i := range d.History {
		e := d
		e.History = edit(d.History, i)
		got, err := Digest(e)
		if err != nil {
			t.Fatal(err)
		}
		if seen[got] {
			t.Errorf("history[%d] changed, digest %s seen before", i, got)
		}
		seen[got] = true
	}
	e := d
	e.PendingTurns = edit(d.PendingTurns, 0)
	if got, _ := Digest(e); seen[got] {
		t.Errorf("pendingTurns[0] changed, digest unchanged")
	}
}

func TestEncodeRefuses(t *testing.T) {
	good := goldenDocs()["v1-group-chat.json"]
	for _, tt := range []struct {
		name  string
		edit  func(d *Document)
		field string
		text  string
	}{
		{"version 0", func(d *Document) { d.SchemaVersion = 0 }, "schemaVersion", "is 0; this package writes version 1"},
		{"no chat id", func(d *Document) { d.ChatID = "" }, "chatId", "is empty"},
		{"state not an object", func(d *Document) {
			d.Channels = []Channel{{ChannelKey: chatHistoryKey, ChannelType: "x", ChannelState: json.RawMessage(`[]`)}}
		},
			"channels[0].channelState", "is not a JSON object"},
		{"big integer", func(d *Document) {
			d.Strategies.Selection.State = json.RawMessage(`{"n":12345678901234567890}`)
		}, "strategies.selection.state", "holds the number 12345678901234567890, which RFC 8785 (IEEE 754 double) cannot keep exactly"},
		{"unknown content without raw", func(d *Document) {
			d.History = []chat.Message{{MessageID: "x", Role: chat.RoleUser, Contents: []chat.Content{{Type: "audio"}}}}
		}, "history[0].contents[0]", `content of type "audio" has no raw JSON object to write`},
		{"raw of another type", func(d *Document) {
			d.History = []chat.Message{{MessageID: "x", Role: chat.RoleUser, Contents: []chat.Content{{Type: "audio", Raw: json.RawMessage(`{"type":"video"}`)}}}}
		}, "history[0].contents[0].type", `raw JSON of a content of type "audio" has another type`},
		{"orphan result", func(d *Document) { d.History = d.History[2:] }, "history[0].contents[0].callId",
			`functionResult "c1" answers no earlier unanswered functionCall; refused, since dropping it would lose data`},
		{"year 10000", func(d *Document) { d.ExportedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "exportedAt", "cannot be written as RFC 3339"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := good
			tt.edit(&d)
			_, _, err := Encode(d)
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidDocument) {
				t.Fatalf("Encode error %v, want a FieldError", err)
			}
			if fe.Field != tt.field || !strings.HasPrefix(fe.Problem, tt.text) {
				t.Errorf("error %q, want field %q and problem %q", err, tt.field, tt.text)
			}
		})
	}
}

func TestEncodeWritesUnansweredCall(t *testing.T) {
	d := goldenDocs()["v1-group-chat.json"]
	d.History = d.History[:2]
	if _, _, err := Encode(d); err != nil {
		t.Fatalf("Encode of an unanswered call: %v (Decode repairs it)", err)
	}
}

func TestEncodeOutputMatchesSchema(t *testing.T) {
	s := compileSchema(t)
	docs := goldenDocs()
	big := benchDocument(300)
	docs["big"] = big
	for name, d := range docs {
		enc, _, err := Encode(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := schemaErr(t, s, enc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCanonicalNumbers(t *testing.T) {
	for raw, want := range map[string]string{
		`{"b":1.0,"a":1e2}`:            `{"a":100,"b":1}`,
		`{"x":-0}`:                     `{"x":0}`,
		`{"x":0.1,"y":1e21,"z":1e-7}`:  `{"x":0.1,"y":1e+21,"z":1e-7}`,
		`{"x":9007199254740993}`:       "", // 2^53+1 is no double
		`{"x":1e400}`:                  "",
		`{"x":1e-400}`:                 "",
		`{"x":1.00000000000000000001}`: "",
		`{"s":"1e400 \" 12345678901234567890","t":"\\","n":[-2.5e3,0.5]}`: `{"n":[-2500,0.5],"s":"1e400 \" 12345678901234567890","t":"\\"}`,
	} {
		got, err := canonicalObject(json.RawMessage(raw))
		if want == "" {
			if err == nil {
				t.Errorf("canonicalObject(%s) = %s, want an error", raw, got)
			}
			continue
		}
		if err != nil || string(got) != want {
			t.Errorf("canonicalObject(%s) = %s, %v; want %s", raw, got, err, want)
		}
	}
}
