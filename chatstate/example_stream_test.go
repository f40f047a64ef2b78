package chatstate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
)

// An export writes a document to a file with its history read one message at a time
// (here from a function; in the worker, from the message store's pages), and an
// import reads it back the same way.
func ExampleEncoder() {
	doc := chatstate.Document{
		SchemaVersion: chatstate.SchemaVersion, ChatID: "support-42",
		ExportedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Source:     chatstate.Source{Namespace: "default", WorkflowID: "support-42"},
		Strategies: chatstate.Strategies{
			Selection:   chatstate.Strategy{Type: "sequential"},
			Termination: chatstate.Strategy{Type: "maxIterations"},
		},
	}
	history := func(yield func(chat.Message) error) error {
		for i := range 1000 {
			m := chat.TextMessage(fmt.Sprintf("m-%d", i), chat.RoleUser, "Alice", fmt.Sprintf("message %d", i))
			if err := yield(m); err != nil {
				return err
			}
		}
		return nil
	}

	f, err := os.Create(filepath.Join(os.TempDir(), "chatstate-example.json"))
	if err != nil {
		panic(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size, digest, err := chatstate.NewEncoder(f).Encode(doc, history)
	if err != nil {
		panic(err)
	}

	dec := chatstate.NewDecoder(f, size)
	header, _, err := dec.Header()
	if err != nil {
		panic(err)
	}
	var n int
	var last chat.Message
	if err := dec.History()(func(m chat.Message) error { n, last = n+1, m; return nil }); err != nil {
		panic(err)
	}
	fmt.Println(header.ChatID, header.Digest == digest, n, last.Text())

	// The same bytes as Encode of the whole document.
	var all []chat.Message
	_ = history(func(m chat.Message) error { all = append(all, m); return nil })
	doc.History = all
	whole, _, _ := chatstate.Encode(doc)
	written, _ := os.ReadFile(f.Name())
	fmt.Println(bytes.Equal(whole, written))
	// Output:
	// support-42 true 1000 message 999
	// true
}
