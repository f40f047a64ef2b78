package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
)

// saveAndRestore exports the thread to a file and restores it into a new chat, which
// then remembers the whole conversation (the seed's thread.serialize / deserialize).
func (d *run) saveAndRestore(ctx context.Context) error {
	d.restoredID = "demo-restored-" + d.suffix
	d.p.title("4. Save and resume: export the thread, restore it into a new chat (" + d.restoredID + ")")
	b, digest, err := d.c.Export(ctx, d.threadID)
	if err != nil {
		return err
	}
	path := filepath.Join(d.exportDir, d.threadID+".json")
	if err := os.MkdirAll(d.exportDir, 0o755); err != nil {
		return err
	}
	plain := len(b)
	if b, err = d.c.SealDocument(b, digest); err != nil { // an envelope with encryption or signing on
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	wrapped := "chat-state v1"
	if len(b) != plain {
		wrapped = "chat-state v1 in an envelope: encrypted or signed, docs/chat-state-v1.md"
	}
	d.p.note("exported %s: %d bytes, %s (%s)", path, len(b), digest, wrapped)
	st, err := d.c.Import(ctx, agentchat.ImportOptions{ChatID: d.restoredID, Path: path})
	if err != nil {
		return err
	}
	d.p.note("restored into %s: %d messages in %d turns, digest checked", d.restoredID, st.MessageCount, st.TurnCount)
	d.chats = append(d.chats, link{d.c, d.restoredID})
	return d.recap(ctx, d.c, d.restoredID)
}

// migrate moves the thread to the second namespace and keeps talking to it there.
func (d *run) migrate(ctx context.Context) error {
	d.p.title(fmt.Sprintf("5. Migrate the thread to namespace %q and keep talking to it there", SecondNamespace))
	res, err := d.c.Migrate(ctx, d.threadID, agentchat.MigrateOptions{ToNamespace: SecondNamespace})
	if err != nil {
		return err
	}
	d.p.note("migrated %s to namespace %q (%d messages, digest %s checked on both sides)",
		d.threadID, res.Target.Namespace, res.MessageCount, res.Digest)
	d.chats = append(d.chats, link{d.cb, d.threadID})
	if err := d.recap(ctx, d.cb, d.threadID); err != nil {
		return err
	}
	_, err = d.c.Send(ctx, d.threadID, agentchat.SendMessageInput{Text: "Are you still here?"})
	if !errors.Is(err, agentchat.ErrChatMigrated) {
		return fmt.Errorf("the migrated source answered %v, want a migrated error", err)
	}
	d.p.note("a turn sent to the old place is refused: %v", err)
	return nil
}

// recap asks a chat what was said, showing that the whole conversation arrived.
func (d *run) recap(ctx context.Context, c *agentchat.Client, id string) error {
	text := "What did we talk about?"
	d.p.message(chat.TextMessage("", chat.RoleUser, "Alice", text))
	res, err := c.Send(ctx, id, agentchat.SendMessageInput{Text: text, AuthorName: "Alice"})
	if err != nil {
		return err
	}
	d.p.messages(res.Messages)
	return nil
}

// waitForWorker waits until the server has seen a worker poll c's task queue, for up
// to 30 s or until ctx ends (CheckWorker then fails at once: the loop must not spin).
func waitForWorker(ctx context.Context, c *agentchat.Client) error {
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if err = c.CheckWorker(ctx, TaskQueue); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}
