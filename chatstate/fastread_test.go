package chatstate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
)

// fastReadDocs are documents whose messages take every branch of the fast reader:
// each content type, unknown contents, escapes, non-ASCII text, pending turns.
func fastReadDocs() map[string]Document {
	docs := goldenDocs()
	docs["10k"] = benchDocument(10_000)
	d := goldenDocs()["v1-group-chat.json"]
	d.History = append(d.History,
		msg("e-1", chat.RoleUser, "Al \"the\" \\ pal", "", 7, chat.Text("tab\there\nnew line\r\u0001\u001f \u2028 é 🐈 </script> &amp;")),
		msg("e-2", chat.RoleAssistant, "", "a", 8, chat.Text("x"), call("c9", "f", `{}`)),
		chat.Message{MessageID: "e-3", Role: chat.RoleTool, Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c9", Error: "boom\n"}}},
		msg("e-4", chat.RoleUser, "", "", 9, unknown(`{"type":"note","text":"looks like text"}`), unknown(`{"arguments":1,"type":"x"}`)),
	)
	docs["escapes"] = d
	return docs
}

// TestFastReadMatchesEncodingJSON: the fast path reads every document as encoding/json
// reads the same bytes.
func TestFastReadMatchesEncodingJSON(t *testing.T) {
	for name, d := range fastReadDocs() {
		t.Run(name, func(t *testing.T) {
			b, _, err := Encode(d)
			require.NoError(t, err)
			got, ok := decodeCanonical(b, nil)
			require.True(t, ok, "the fast path takes a document Encode wrote")
			var want Document
			require.NoError(t, json.Unmarshal(b, &want))
			assert.Equal(t, want, got)
		})
	}
}

// TestFastReadRefusesWhatItCannotRead: bytes off the canonical layout are left to
// encoding/json, never misread.
func TestFastReadRefusesWhatItCannotRead(t *testing.T) {
	for _, in := range []string{
		`[{"contents":[],"messageId":"m","role":"user"}`,               // unterminated
		`[{"messageId":"m","contents":[],"role":"user"}]`,              // members out of order
		`[{"contents":[],"messageId":"m","role":"user"} ]`,             // space
		`[{"contents":[],"messageId":"m\u00e9","role":"user"}]`,        // an escape RFC 8785 does not write
		"[{\"contents\":[],\"messageId\":\"\xff\",\"role\":\"user\"}]", // not UTF-8
		`[{"contents":[{"text":5,"type":"text"}],"messageId":"m","role":"user"}]`,
	} {
		got, err := readMessages([]byte(in))
		if err == nil {
			// Read: then it must be what encoding/json reads.
			var want []chat.Message
			require.NoError(t, json.Unmarshal([]byte(in), &want), in)
			assert.Equal(t, want, got, in)
			continue
		}
		assert.ErrorIs(t, err, errNotCanonical, in)
	}
}

// FuzzReadMessages: whatever readMessages reads, encoding/json reads the same way.
func FuzzReadMessages(f *testing.F) {
	for _, d := range fastReadDocs() {
		if len(d.History) > 3 {
			d.History = d.History[:3]
		}
		var e encoder
		if err := e.messages("history", d.History); err != nil {
			f.Fatal(err)
		}
		f.Add(e.b[len(`"history":`):])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := readMessages(b)
		if err != nil {
			return
		}
		var want []chat.Message
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("read %q, which encoding/json refuses: %v", b, err)
		}
		if !assert.ObjectsAreEqual(want, got) {
			t.Fatalf("read %q as\n%#v\nencoding/json reads\n%#v", b, got, want)
		}
	})
}

// TestMessagesRoundTripThroughEncodeMessage: every message of the test documents comes
// back from DecodeMessage as encoding/json reads it, and other JSON is read too.
func TestMessagesRoundTripThroughEncodeMessage(t *testing.T) {
	for name, d := range fastReadDocs() {
		for _, m := range append(d.History, d.PendingTurns...) {
			b, err := EncodeMessage(m)
			require.NoError(t, err, name)
			var want chat.Message
			require.NoError(t, json.Unmarshal(b, &want), name)
			got, err := DecodeMessage(b)
			require.NoError(t, err, name)
			assert.Equal(t, want, got, name)
		}
	}
	got, err := DecodeMessage([]byte(` {"role":"user", "messageId":"m","contents":[{"type":"text","text":"hi"}]}`))
	require.NoError(t, err)
	assert.Equal(t, chat.TextMessage("m", chat.RoleUser, "", "hi"), got)
	_, err = DecodeMessage([]byte(`{"contents":[{"text":"hi"}]}`))
	assert.Error(t, err, "a content without a type")
}

// DecodeMessages reads an array of the test documents' messages, canonical or not, as
// encoding/json does; null and what is not an array of messages are errors.
func TestDecodeMessagesReadsAsEncodingJSON(t *testing.T) {
	for name, d := range fastReadDocs() {
		var list []byte
		list = append(list, '[')
		for i, m := range append(d.History, d.PendingTurns...) {
			b, err := EncodeMessage(m)
			require.NoError(t, err, name)
			if i > 0 {
				list = append(list, ',')
			}
			list = append(list, b...)
		}
		list = append(list, ']')
		for _, b := range [][]byte{list, append([]byte(" "), list...)} { // the second is not canonical
			want := []chat.Message{}
			require.NoError(t, json.Unmarshal(b, &want), name)
			got, err := DecodeMessages(b)
			require.NoError(t, err, name)
			assert.Equal(t, want, got, name)
		}
	}
	for _, bad := range []string{"null", "{}", `[{"contents":[{"text":"hi"}]}]`, "[", ""} {
		_, err := DecodeMessages([]byte(bad))
		assert.Error(t, err, bad)
	}
}

// unescape reads every escape appendString writes, wherever it falls in the text.
func TestUnescapeReadsAppendString(t *testing.T) {
	for _, s := range []string{"", "plain text", "\xff\xfe bad", "ab\xc3", "a\"b\\c\n\t\r\b\f\x00\x1f end", "\x01", "x\n", "\nx",
		strings.Repeat("long run ", 9) + "\"" + strings.Repeat("é猫", 5) + "\x7f\u2028"} {
		var valid strings.Builder // each invalid byte as U+FFFD, as appendString writes it
		for _, r := range s {
			valid.WriteRune(r)
		}
		enc := appendString(nil, s)
		back, ok := unescape(enc[1 : len(enc)-1])
		if !ok || back != valid.String() {
			t.Fatalf("unescape(appendString(%q)) = %q, %v", s, back, ok)
		}
	}
}

// The fast path takes only the bytes Encode writes: a change anywhere (a message
// written another way, a member of the rest, the digest, a pending turn) leaves it to
// the general path, which reads the same document or names what is wrong.
func TestDecodeCanonicalRefusesAnyChange(t *testing.T) {
	d := fastReadDocs()["escapes"]
	d.PendingTurns = []chat.Message{msg("p-1", chat.RoleUser, "Al", "", 10, chat.Text("later é"))}
	b, digest, err := Encode(d)
	require.NoError(t, err)
	_, ok := decodeCanonical(b, nil)
	require.True(t, ok)
	hexAt := bytes.Index(b, []byte(digest)) + len(digestPrefix)
	flipHex := func(b []byte) { b[hexAt] = "01"[b[hexAt]&1] }
	for name, change := range map[string]func([]byte) []byte{
		"a message's escape": func(b []byte) []byte { return bytes.Replace(b, []byte(`é 🐈`), []byte(`\u00e9 🐈`), 1) },
		"a message's text":   func(b []byte) []byte { return bytes.Replace(b, []byte(`"text":"x"`), []byte(`"text":"y"`), 1) },
		"the chat id":        func(b []byte) []byte { return bytes.Replace(b, []byte(`"chatId":"`), []byte(`"chatId":"x`), 1) },
		"a pending turn":     func(b []byte) []byte { return bytes.Replace(b, []byte(`later é`), []byte(`later e`), 1) },
		"the digest":         func(b []byte) []byte { flipHex(b); return b },
		"a longer digest":    func(b []byte) []byte { return append(b[:hexAt:hexAt], append([]byte("0"), b[hexAt:]...)...) },
	} {
		t.Run(name, func(t *testing.T) {
			changed := change(bytes.Clone(b))
			require.NotEqual(t, b, changed)
			_, ok := decodeCanonical(changed, nil)
			assert.False(t, ok)
		})
	}
	// A changed message with its digest recomputed is canonical again: the fast path takes it.
	d.History[0].AuthorName += "!"
	b2, _, err := Encode(d)
	require.NoError(t, err)
	got, ok := decodeCanonical(b2, nil)
	require.True(t, ok)
	assert.Equal(t, d.History[0].AuthorName, got.History[0].AuthorName)
}
