package chatstate

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
)

// Fault 7: import accepted contents in the wrong role and then sent the model what it
// refuses or misreads. Each is refused, naming the field; Encode and the JSON Schema
// refuse it too.
func TestDecodeRefusesContentsInTheWrongRole(t *testing.T) {
	doc := goldenDocs()["v1-group-chat.json"]
	schema := compileSchema(t)
	img := chat.Content{Type: chat.ContentImage, URI: "https://example.com/a.png"}
	for _, tt := range []struct {
		name  string
		edit  func(h []chat.Message) []chat.Message
		field string
		text  string
	}{
		{"a functionResult in an assistant message", func(h []chat.Message) []chat.Message {
			h[3].Contents = append(h[3].Contents, result("c1", "again"))
			return h
		}, "history[3].contents[1]", "chat-state: history[3].contents[1]: is a functionResult in an assistant message; a functionResult is only in a tool message"},
		{"a functionCall in a user message", func(h []chat.Message) []chat.Message {
			h[0].Contents = append(h[0].Contents, call("c9", "lookup", "{}"))
			return h
		}, "history[0].contents[1]", "chat-state: history[0].contents[1]: is a functionCall in a user message; a functionCall is only in an assistant message"},
		{"a functionCall in a tool message", func(h []chat.Message) []chat.Message {
			h[2].Contents = append(h[2].Contents, call("c9", "lookup", "{}"))
			return h
		}, "history[2].contents[1]", "chat-state: history[2].contents[1]: is a functionCall in a tool message; a functionCall is only in an assistant message"},
		{"an assistant message with nothing a model reads", func(h []chat.Message) []chat.Message {
			h[4].Contents = []chat.Content{unknown(`{"type":"audio","uri":"https://example.com/a.mp3"}`)}
			return h
		}, "history[4].contents", "chat-state: history[4].contents: an assistant message needs a text or a functionCall; a model can read nothing else of it"},
		{"an image in an assistant message", func(h []chat.Message) []chat.Message {
			h[4].Contents = append(h[4].Contents, img)
			return h
		}, "history[4].contents[1]", "chat-state: history[4].contents[1]: is an image in an assistant message; an image is only in a user message"},
		{"a text in a tool message", func(h []chat.Message) []chat.Message {
			h[2].Contents = append(h[2].Contents, chat.Text("note"))
			return h
		}, "history[2].contents[1]", "chat-state: history[2].contents[1]: is a text in a tool message; a tool message holds functionResults, a model would never read this text"},
		{"a function name a model refuses", func(h []chat.Message) []chat.Message {
			h[1].Contents[0].Name = "look up"
			return h
		}, "history[1].contents[0].name", `chat-state: history[1].contents[0].name: "look up" is not a function name a model takes (^[a-zA-Z0-9_-]{1,64}$)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := doc
			d.History = tt.edit(cloneMessages(doc.History))
			b := seal(t, asMap(t, d))
			assert.Error(t, schemaErr(t, schema, b), "the JSON Schema refuses it too")
			_, _, err := Decode(b)
			var fe *FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tt.field, fe.Field)
			assert.Equal(t, tt.text, err.Error())
			_, _, err = Encode(d)
			assert.ErrorAs(t, err, &fe, "Encode refuses what Decode refuses")
		})
	}
}

func cloneMessages(ms []chat.Message) []chat.Message {
	out := make([]chat.Message, len(ms))
	for i, m := range ms {
		m.Contents = append([]chat.Content(nil), m.Contents...)
		out[i] = m
	}
	return out
}
