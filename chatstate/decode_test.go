package chatstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentchat/agentchat/chat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeRefuses: each refusal names its field, with its message.
func TestDecodeRefuses(t *testing.T) {
	_, files := goldenFiles(t)
	golden := files["v1-group-chat.json"]
	goldenDigest := fileDigest(t, golden)
	replace := func(old, new string) []byte {
		if !bytes.Contains(golden, []byte(old)) {
			t.Fatalf("golden lacks %s", old)
		}
		return bytes.Replace(golden, []byte(old), []byte(new), 1)
	}
	doc := goldenDocs()["v1-group-chat.json"]
	// sealed returns the group chat with edit applied and a right digest.
	sealed := func(edit func(m map[string]any)) []byte {
		m := asMap(t, doc)
		edit(m)
		return seal(t, m)
	}
	historyMsg := func(m map[string]any, i int) map[string]any { return path(m, "history", i).(map[string]any) }
	content := func(m map[string]any, i, j int) map[string]any {
		return path(m, "history", i, "contents", j).(map[string]any)
	}
	tampered := replace("My name is Alice.", "My name is Mallory.")

	for _, tt := range []struct {
		name  string
		in    []byte
		field string
		text  string // the whole Error(), or its start when it ends with "…"
	}{
		{"unknown version 2", replace(`"schemaVersion":1`, `"schemaVersion":2`), "schemaVersion",
			"chat-state: schemaVersion: is 2, a version this reader does not know; it knows versions 1"},
		{"version as a string", replace(`"schemaVersion":1`, `"schemaVersion":"1"`), "schemaVersion",
			`chat-state: schemaVersion: is "1", not an integer; this reader knows versions 1`},
		{"version 1.0", replace(`"schemaVersion":1`, `"schemaVersion":1.0`), "schemaVersion",
			"chat-state: schemaVersion: is 1.0, not an integer; this reader knows versions 1"},
		{"no version", replace(`"schemaVersion":1,`, ``), "schemaVersion", "chat-state: schemaVersion: is missing"},
		{"missing digest", replace(`"digest":"`+goldenDigest+`",`, ``), "digest", "chat-state: digest: is missing"},
		{"malformed digest", replace(goldenDigest, "sha256:ABC"), "digest",
			`chat-state: digest: "sha256:ABC" is not "sha256:" followed by 64 lowercase hex digits`},
		{"wrong digest", replace(goldenDigest, "sha256:"+strings.Repeat("0", 64)), "digest",
			"chat-state: digest: does not match the document: it says sha256:" + strings.Repeat("0", 64) + ", the document hashes to " + goldenDigest},
		{"tampered text", tampered, "digest",
			"chat-state: digest: does not match the document: it says " + goldenDigest + ", the document hashes to " + digestOf(t, tampered)},
		{"malformed JSON", golden[:200], "channels[1].channelState",
			"chat-state: channels[1].channelState: is not valid JSON: the document ends early"},
		{"bad character", replace(`"chatId":"support-42"`, `"chatId":support-42`), "chatId",
			"chat-state: chatId: is not valid JSON: invalid character 's' looking for beginning of value (byte offset 269)"},
		{"trailing data", append(append([]byte{}, golden...), " {}"...), "", "chat-state: has data after the document (byte offset …"},
		{"not an object", []byte(` [1, 2]`), "", "chat-state: is an array, not a JSON object"},
		{"empty input", []byte(""), "", "chat-state: is not valid JSON: the document ends early"},
		{"invalid UTF-8", replace("Approved.", "Approved\xff"), "", "chat-state: is not valid UTF-8"},
		{"duplicate member", replace(`"chatId":"support-42"`, `"chatId":"support-42","chatId":"x"`), "chatId", "chat-state: chatId: appears twice"},
		{"unknown member", replace(`"chatId":`, `"chat_id":"x","chatId":`), "chat_id",
			"chat-state: chat_id: is not a member of the document in chat-state v1"},
		{"member of a text content", sealed(func(m map[string]any) { content(m, 0, 0)["uri"] = "x" }), "history[0].contents[0].uri",
			"chat-state: history[0].contents[0].uri: is not a member of a text content in chat-state v1"},
		{"null authorName", sealed(func(m map[string]any) { historyMsg(m, 0)["authorName"] = nil }), "history[0].authorName",
			"chat-state: history[0].authorName: is null, not a string"},
		{"negative usage", sealed(func(m map[string]any) {
			historyMsg(m, 1)["usage"] = map[string]any{"inputTokens": -1, "outputTokens": 2}
		}), "history[1].usage.inputTokens", "chat-state: history[1].usage.inputTokens: is -1, a negative count"},
		{"usage without outputTokens", sealed(func(m map[string]any) {
			historyMsg(m, 1)["usage"] = map[string]any{"inputTokens": 1}
		}), "history[1].usage.outputTokens", "chat-state: history[1].usage.outputTokens: is missing"},
		{"unknown usage member", sealed(func(m map[string]any) {
			historyMsg(m, 1)["usage"] = map[string]any{"inputTokens": 1, "outputTokens": 2, "cost": 3}
		}), "history[1].usage.cost", "chat-state: history[1].usage.cost: is not a member of a message's usage in chat-state v1"},
		{"content without type", sealed(func(m map[string]any) { delete(content(m, 3, 0), "type") }), "history[3].contents[0].type",
			"chat-state: history[3].contents[0].type: is missing"},
		{"call without name", sealed(func(m map[string]any) { delete(content(m, 1, 0), "name") }), "history[1].contents[0].name",
			"chat-state: history[1].contents[0].name: is missing"},
		{"bad time", sealed(func(m map[string]any) { m["exportedAt"] = "yesterday" }), "exportedAt",
			`chat-state: exportedAt: "yesterday" is not an RFC 3339 time`},
		{"duplicate messageId", sealed(func(m map[string]any) { historyMsg(m, 2)["messageId"] = "m-1" }), "history[2].messageId",
			`chat-state: history[2].messageId: "m-1" is also history[0].messageId`},
		{"pending turn with a history id", sealed(func(m map[string]any) { path(m, "pendingTurns", 0).(map[string]any)["messageId"] = "m-1/3" }),
			"pendingTurns[0].messageId", `chat-state: pendingTurns[0].messageId: "m-1/3" is also history[3].messageId`},
		{"bad channelKey", sealed(func(m map[string]any) { path(m, "channels", 1).(map[string]any)["channelKey"] = "c2hvcnQ=" }),
			"channels[1].channelKey", `chat-state: channels[1].channelKey: "c2hvcnQ=" is 5 bytes, not the 32 of a SHA-256`},
		{"channelKey not base64", sealed(func(m map[string]any) { path(m, "channels", 0).(map[string]any)["channelKey"] = "chat_history" }),
			"channels[0].channelKey", `chat-state: channels[0].channelKey: "chat_history" is not standard base64 with padding`},
		{"duplicate channelKey", sealed(func(m map[string]any) { path(m, "channels", 1).(map[string]any)["channelKey"] = chatHistoryKey }),
			"channels[1].channelKey", "chat-state: channels[1].channelKey: is also channels[0].channelKey"},
		{"channelState not an object", sealed(func(m map[string]any) { path(m, "channels", 0).(map[string]any)["channelState"] = []any{} }),
			"channels[0].channelState", "chat-state: channels[0].channelState: is an array, not an object"},
		{"strategy state null", sealed(func(m map[string]any) { path(m, "strategies", "termination").(map[string]any)["state"] = nil }),
			"strategies.termination.state", "chat-state: strategies.termination.state: is null, not an object"},
		{"empty strategy type", sealed(func(m map[string]any) { path(m, "strategies", "selection").(map[string]any)["type"] = "" }),
			"strategies.selection.type", "chat-state: strategies.selection.type: is empty"},
		{"state number too big", sealed(func(m map[string]any) {
			path(m, "channels", 1).(map[string]any)["channelState"] = json.RawMessage(`{"n":123456789012345678901234}`)
		}), "channels[1].channelState", "chat-state: channels[1].channelState: holds the number 123456789012345678901234, which RFC 8785 (IEEE 754 double) cannot keep exactly"},
		{"orphan functionResult", sealed(func(m map[string]any) {
			content(m, 1, 0)["type"], content(m, 1, 0)["text"] = "text", "no call"
			delete(content(m, 1, 0), "callId")
			delete(content(m, 1, 0), "name")
			delete(content(m, 1, 0), "arguments")
		}), "history[2].contents[0].callId",
			`chat-state: history[2].contents[0].callId: functionResult "c1" answers no earlier unanswered functionCall; refused, since dropping it would lose data`},
		{"result after the next turn", sealed(func(m map[string]any) {
			h := m["history"].([]any)
			h[2], h[3] = h[3], h[2]
		}), "history[3].contents[0].callId",
			`chat-state: history[3].contents[0].callId: functionResult "c1" answers no earlier unanswered functionCall; refused, since dropping it would lose data`},
		{"duplicate callId", sealed(func(m map[string]any) {
			h := m["history"].([]any)
			again := mustMap(t, must(json.Marshal(h[1])))
			again["messageId"] = "again"
			m["history"] = append(h[:4:4], again, h[4])
		}), "history[4].contents[0].callId",
			`chat-state: history[4].contents[0].callId: functionCall "c1" has the callId of history[1].contents[0].callId; callIds are unique`},
		{"empty participant id", sealed(func(m map[string]any) { path(m, "participants", 1).(map[string]any)["id"] = "" }),
			"participants[1].id", "chat-state: participants[1].id: is empty"},
		{"duplicate participant id", sealed(func(m map[string]any) { path(m, "participants", 1).(map[string]any)["id"] = "writer" }),
			"participants[1].id", `chat-state: participants[1].id: "writer" is also participants[0].id`},
		{"participant without type", sealed(func(m map[string]any) { path(m, "participants", 0).(map[string]any)["type"] = "" }),
			"participants[0].type", "chat-state: participants[0].type: is empty"},
		{"pending turn by the assistant", sealed(func(m map[string]any) { path(m, "pendingTurns", 0).(map[string]any)["role"] = "assistant" }),
			"pendingTurns[0].role", `chat-state: pendingTurns[0].role: is "assistant"; a pending turn is a user message`},
		{"bad role", sealed(func(m map[string]any) { historyMsg(m, 0)["role"] = "human" }), "history[0].role",
			`chat-state: history[0].role: "human" is not system, user, assistant or tool`},
		{"blank text", sealed(func(m map[string]any) { content(m, 3, 0)["text"] = " \n" }), "history[3].contents[0].text",
			"chat-state: history[3].contents[0].text: is blank"},
		{"no contents", sealed(func(m map[string]any) { historyMsg(m, 0)["contents"] = []any{} }), "history[0].contents",
			"chat-state: history[0].contents: is empty: a message has at least one content"},
		{"empty chatId", sealed(func(m map[string]any) { m["chatId"] = "" }), "chatId", "chat-state: chatId: is empty"},
		{"empty namespace", sealed(func(m map[string]any) { path(m, "source").(map[string]any)["namespace"] = "" }),
			"source.namespace", "chat-state: source.namespace: is empty"},
		{"image without uri", sealed(func(m map[string]any) {
			historyMsg(m, 0)["contents"] = []any{map[string]any{"type": "image", "data": "AAAA"}}
		}),
			"history[0].contents[0].mediaType", "chat-state: history[0].contents[0].mediaType: is empty: an image with data needs mediaType"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode(tt.in)
			if err == nil {
				t.Fatal("Decode accepted it")
			}
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidDocument) {
				t.Fatalf("error %v (%T) is not a FieldError wrapping ErrInvalidDocument", err, err)
			}
			if fe.Field != tt.field {
				t.Errorf("field %q, want %q (error %q)", fe.Field, tt.field, err)
			}
			if prefix, ok := strings.CutSuffix(tt.text, "…"); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("error\n %q\nwant %q…", err, prefix)
				}
			} else if err.Error() != tt.text {
				t.Errorf("error\n %q\nwant\n %q", err, tt.text)
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// digestOf computes the digest of a document as read, by the package's rule.
func digestOf(t testing.TB, b []byte) string {
	t.Helper()
	err := verifyDigest(b, "sha256:"+strings.Repeat("0", 64))
	_, computed, ok := strings.Cut(err.Error(), "the document hashes to ")
	if !ok {
		t.Fatalf("no digest in %v", err)
	}
	return computed
}

func TestDecodeRepairsMissingResult(t *testing.T) {
	d := goldenDocs()["v1-group-chat.json"]
	// The writer calls c1 and c2; only c1 is answered before the writer speaks again.
	d.History[1].Contents = append(d.History[1].Contents, call("c2", "weather", `{"city":"Paris"}`))
	in := seal(t, asMap(t, d))

	got, rep, err := Decode(in)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	wantRepair := `history[1].contents[1].callId: functionCall "c2" had no functionResult; inserted tool message "m-1/1/repair-c2" with an error result as history[3]`
	if len(rep.Repairs) != 1 || rep.Repairs[0] != wantRepair {
		t.Errorf("Repairs = %q, want [%q]", rep.Repairs, wantRepair)
	}
	if len(got.History) != 6 {
		t.Fatalf("history has %d messages, want 6", len(got.History))
	}
	want := chat.Message{MessageID: "m-1/1/repair-c2", Role: chat.RoleTool, Contents: []chat.Content{{
		Type: chat.ContentFunctionResult, CallID: "c2", Error: "no result was recorded for this call (added on import)",
	}}}
	sameMessage(t, got.History[3], want)
	for i, id := range []string{"m-1", "m-1/1", "m-1/2", "m-1/1/repair-c2", "m-1/3", "m-1/4"} {
		if got.History[i].MessageID != id {
			t.Errorf("history[%d] is %q, want %q", i, got.History[i].MessageID, id)
		}
	}
	// The repaired document is valid, re-encodes, and reads back without repair.
	if err := got.Validate(); err != nil {
		t.Fatalf("repaired document: %v", err)
	}
	enc, digest, err := Encode(got)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if got.Digest != digest {
		t.Errorf("Decode's digest %s, Encode's %s", got.Digest, digest)
	}
	if !bytes.Contains(enc, []byte(`{"contents":[{"callId":"c2","error":"no result was recorded for this call (added on import)","result":"","type":"functionResult"}],"messageId":"m-1/1/repair-c2","role":"tool"}`)) {
		t.Errorf("encoded repair not found in %s", enc)
	}
	again, rep2, err := Decode(enc)
	if err != nil || len(rep2.Repairs) != 0 {
		t.Fatalf("Decode(Encode(repaired)) = %v, repairs %q", err, rep2.Repairs)
	}
	sameDocument(t, again, got)
	if err := schemaErr(t, compileSchema(t), enc); err != nil {
		t.Errorf("repaired document does not match the schema: %v", err)
	}
}

func sameMessage(t testing.TB, got, want chat.Message) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("message\n %s\nwant\n %s", g, w)
	}
}

// TestDigestCheckedBeforeRepair: a document needing repair with a wrong digest is refused.
func TestDigestCheckedBeforeRepair(t *testing.T) {
	d := goldenDocs()["v1-group-chat.json"]
	d.History = append(d.History[:2:2], d.History[3:]...)
	m := asMap(t, d)
	m["digest"] = "sha256:" + strings.Repeat("a", 64)
	b, _ := json.Marshal(m)
	_, rep, err := Decode(b)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "digest" || len(rep.Repairs) != 0 {
		t.Errorf("Decode = %v, repairs %q; want a digest error and no repair", err, rep.Repairs)
	}
}

func TestDecodeKeepsUnknownContent(t *testing.T) {
	_, files := goldenFiles(t)
	b := files["v1-contents.json"]
	doc, _, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	audio := doc.History[0].Contents[2]
	if audio.Type != "audio" || string(audio.Raw) != `{"durationMs":1200,"type":"audio","uri":"https://x/a.wav"}` {
		t.Errorf("audio content = %+v (raw %s)", audio, audio.Raw)
	}
	video := doc.History[1+1].Contents[1]
	if string(video.Raw) != `{"frames":[1,2.5,-300],"text":{"lang":"en","lines":["héllo","wörld ✓"]},"type":"video"}` {
		t.Errorf("video raw = %s", video.Raw)
	}
	// Not in canonical form: kept as a value, written canonically.
	m := mustMap(t, b)
	path(m, "history", 0, "contents").([]any)[2] = json.RawMessage(`{ "uri" : "https://x/a.wav", "type":"audio",
		"durationMs": 1.2e3, "extra": {"z": [true, null], "a": "\u00e9"} }`)
	doc, _, err = Decode(seal(t, m))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(doc.History[0].Contents[2].Raw); got != `{"durationMs":1200,"extra":{"a":"é","z":[true,null]},"type":"audio","uri":"https://x/a.wav"}` {
		t.Errorf("raw = %s", got)
	}
	enc, _, err := Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(enc, doc.History[0].Contents[2].Raw) {
		t.Errorf("unknown content not written as kept: %s", enc)
	}
}

// TestDecodeUpgradedFrom0: the upgrade mechanism, with a made-up version 0 whose chat id
// member was "chat".
func TestDecodeUpgrades(t *testing.T) {
	var steps []int
	defer func(saved map[int]upgrade) { upgrades = saved }(upgrades)
	upgrades = map[int]upgrade{0: {
		verify: func(b []byte) error { steps = append(steps, -1); return verifyDigest(b, fileDigest(t, b)) },
		up: func(b []byte) ([]byte, error) {
			steps = append(steps, 0)
			m := mustMap(t, b)
			m["chatId"], m["schemaVersion"] = m["chat"], 1
			delete(m, "chat")
			delete(m, "digest")
			return json.Marshal(m)
		},
	}}
	if got := knownVersions(); got != "0 and 1" {
		t.Errorf("knownVersions = %q", got)
	}
	d := goldenDocs()["v1-thread.json"]
	m := asMap(t, d)
	m["chat"], m["schemaVersion"] = m["chatId"], 0
	delete(m, "chatId")
	old := seal(t, m)

	got, rep, err := Decode(old)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(steps) != 2 || rep.UpgradedFrom != 0 || len(rep.Repairs) != 0 {
		t.Errorf("steps %v, report %+v", steps, rep)
	}
	want, _ := Digest(d)
	if got.ChatID != "thread-1" || got.SchemaVersion != 1 || got.Digest != want {
		t.Errorf("upgraded document: chatId %q, version %d, digest %s (want %s)", got.ChatID, got.SchemaVersion, got.Digest, want)
	}
	// The old digest is checked by the old rules.
	m["digest"] = "sha256:" + strings.Repeat("1", 64)
	b, _ := json.Marshal(m)
	if _, _, err := Decode(b); err == nil || !strings.Contains(err.Error(), "digest: does not match") {
		t.Errorf("Decode of a v0 document with a wrong digest: %v", err)
	}
}

func TestUpgradeChainOrder(t *testing.T) {
	defer func(saved map[int]upgrade) { upgrades = saved }(upgrades)
	var order []int
	step := func(v int) upgrade {
		return upgrade{
			verify: func([]byte) error { return nil },
			up:     func(b []byte) ([]byte, error) { order = append(order, v); return append(b, byte('0'+v)), nil },
		}
	}
	upgrades = map[int]upgrade{-1: step(-1), 0: step(0)}
	out, err := upgradeFrom([]byte("x"), -1)
	if err != nil || string(out) != "x/0" || len(order) != 2 || order[0] != -1 || order[1] != 0 {
		t.Errorf("upgradeFrom = %q, %v; order %v", out, err, order)
	}
	if got := knownVersions(); got != "-1, 0 and 1" {
		t.Errorf("knownVersions = %q", got)
	}
}

// Every error Decode returns is valid UTF-8, however the document's bytes are cut or
// broken: a failure message travels as a protobuf string (Temporal's failures), and
// one that is not valid UTF-8 does not marshal. Errors that quote a part of the
// document clip it at a character's boundary.
func TestDecodeErrorsAreValidUTF8(t *testing.T) {
	long := strings.Repeat("é", 30) // 60 bytes: a clip at 40 bytes falls inside no character only by luck
	for name, doc := range map[string]string{
		"schemaVersion a long string":  `{"schemaVersion":"x` + long + `"}`,
		"schemaVersion odd bytes":      "{\"schemaVersion\":\"\xff\xfe" + long + "\"}",
		"digest a long string":         `{"schemaVersion":1,"digest":"` + long + `"}`,
		"exportedAt a long string":     `{"schemaVersion":1,"chatId":"c","exportedAt":"x` + long + `","history":[]}`,
		"schemaVersion a number shape": `{"schemaVersion":1.5e` + strings.Repeat("9", 50) + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := Decode([]byte(doc))
			require.Error(t, err)
			assert.True(t, utf8.ValidString(err.Error()), "not valid UTF-8: %q", err.Error())
		})
	}
}

// A history may begin with an assistant message (a greeting, a handed-over chat): it
// imports as it is, with no repair, whatever follows it.
func TestDecodeTakesAHistoryThatBeginsWithTheAssistant(t *testing.T) {
	greeting := msg("g", chat.RoleAssistant, "Assistant", "assistant", 0, chat.Text("Hi, I'm the assistant. How can I help?"))
	withCall := msg("g", chat.RoleAssistant, "Assistant", "assistant", 0, call("c0", "lookup", `{"order":7}`))
	callResult := msg("g/r", chat.RoleTool, "", "", 0, result("c0", `{"status":"shipped"}`))
	thread := goldenDocs()["v1-thread.json"].History
	for _, tt := range []struct {
		name    string
		history []chat.Message
	}{
		{"greeting, then the thread", append([]chat.Message{greeting}, thread...)},
		{"the greeting alone", []chat.Message{greeting}},
		{"the thread without its first user message", thread[1:]},
		{"a tool call and its result first", append([]chat.Message{withCall, callResult}, thread...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := goldenDocs()["v1-thread.json"]
			d.History = tt.history
			b, _, err := Encode(d)
			require.NoError(t, err)
			got, report, err := Decode(b)
			require.NoError(t, err)
			assert.Empty(t, report.Repairs)
			require.Len(t, got.History, len(tt.history))
			assert.Equal(t, chat.RoleAssistant, got.History[0].Role)
			assert.Equal(t, tt.history[0].MessageID, got.History[0].MessageID)
		})
	}
}
